// collage-partition refines the search's plan before it forms the kernel regions
// (refine-budget, scored like the estimator: the mock latency model here), and keeps the
// near-tied plans it measured as functions beside the result (refine-alternatives).
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:1,test:0.9" refine-budget=10 refine-alternatives=1}' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=SUMMARY --input-file=%t.err

// All on tvm (2.71 s by the mock model, one fused kernel) is cheaper than the test
// backend's relus around tvm's sigmoid (2.8 s), which refinement keeps as the alternative.
// SUMMARY: collage-refine @chain: start 2.71e+03 ms, best seed {{.*}} variants tried (0 accepted, 0 failed), final 2.71e+03 ms (1.000x start, 1 kernel), alternative {{.*}} (1.033x start), stopped: converged

// CHECK-LABEL: func.func @chain
// CHECK-SAME:    attributes {collage.alternatives = [@chain.alt1]}
// CHECK-NEXT:    %c = collage.kernel "tvm"(%x) {label = "relu_sigmoid", cost = 2.710000e+00 : f64}
// CHECK:         func.return %c
// CHECK-LABEL: func.func @chain.alt1
// CHECK:         collage.kernel "test"
// CHECK:         collage.kernel "tvm"
// CHECK:         collage.kernel "test"
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

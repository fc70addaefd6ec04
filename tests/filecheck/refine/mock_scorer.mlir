// collage-refine after collage-partition, scored by the mock latency model: per-op mock
// costs plus mock-transfer=2 per tensor handed between backends. Each function gets one
// summary line on stderr; report= writes every trial (of the last input) as JSON.
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" estimator=mock mock-costs="tvm:1,test:0.5"},collage-refine{backends=tvm,test backend-options="test: ops=relu" budget=10 scorer=mock mock-costs="tvm:1,test:0.5" mock-transfer=2}' 2>/dev/null | filecheck %s
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" estimator=mock mock-costs="tvm:1,test:0.5"},collage-refine{backends=tvm,test backend-options="test: ops=relu" budget=10 scorer=mock mock-costs="tvm:1,test:0.5" mock-transfer=2 report="%t.json"}' 2>&1 >/dev/null | filecheck %s --check-prefix=SUMMARY
// RUN: filecheck %s --check-prefix=REPORT --input-file=%t.json

// The search's plan hands the tensor between backends twice: relu on the cheaper test
// backend, sigmoid on tvm, relu on test again. Priced per handover (mock-transfer=2),
// all on tvm (the "tvm alone" seed) is faster, so refinement takes it.
// SUMMARY: collage-refine @chain: start 6e+03 ms, best seed tvm alone (0.452x), {{[0-9]+}} variants tried ({{[0-9]+}} accepted, 0 failed), final 2.71e+03 ms (0.452x start, 1 kernel), stopped: converged, {{.*}} s

// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %c = collage.kernel "tvm"(%x) {label = "relu_sigmoid"} : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<4xf32>):
// CHECK-NEXT:      %a = collage.relu %x_1
// CHECK-NEXT:      %b = collage.sigmoid %a
// CHECK-NEXT:      %c_1 = collage.relu %b
// CHECK-NEXT:      collage.yield %c_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %c
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// -----

// Constants (cloned into kernels by collage-partition) and kernels with two results
// survive the round trip from regions to a plan and back. The report is this function's:
// the tvm-alone seed accepted, the test-alone seed skipped (test cannot run collage.mul),
// then climbing and the final confirmation.
// SUMMARY: collage-refine @shared: start

// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    %r, %t = collage.kernel "tvm"(%x) {label = "relu_mul_sigmoid_tanh"}
// CHECK-NEXT:    ^bb0(%x_1: tensor<4xf32>):
// CHECK-NEXT:      %w = collage.constant dense<2.000000e+00>
// CHECK:           collage.yield %r_1, %t_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r, %t

// REPORT:      "function": "shared",
// REPORT:      "stopped": "converged",
// REPORT:      "start": {
// REPORT-NEXT:   "origin": "start",
// REPORT-NEXT:   "kernels": 4,
// REPORT:      "final": {
// REPORT-NEXT:   "origin": "tvm alone",
// REPORT-NEXT:   "kernels": 1,
// REPORT:      "changed": true,
// REPORT:      "origin": "tvm alone",
// REPORT-NEXT: "kind": "seed",
// REPORT-NEXT: "status": "accepted",
// REPORT:      "origin": "test alone",
// REPORT-NEXT: "kind": "seed",
// REPORT-NEXT: "status": "skipped",
// REPORT:      "reason": "collage-assign: backend 'test' does not support collage.mul (node %m in @shared)",
// REPORT:      "kind": "climb",
// REPORT:      "kind": "confirm",
// REPORT-NEXT: "status": "confirmed",
func.func @shared(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w = collage.constant dense<2.0> : tensor<4xf32>
  %a = collage.relu %x : tensor<4xf32>
  %m = collage.mul %a, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = collage.sigmoid %m : tensor<4xf32>
  %r = collage.relu %s : tensor<4xf32>
  %t = collage.tanh %a : tensor<4xf32>
  func.return %r, %t : tensor<4xf32>, tensor<4xf32>
}

// tvm's maximal region: the search prices the one kernel MaxCoalesce would make of tvm's
// kernels, not its parts with a launch each. With single-op tvm candidates and a launch
// penalty of 0.5, four tvm kernels (4 x 1.5) lose to four test ones (4 x 1.3); the region
// (1 + 0.9 + 0.81 + 0.729 = 3.439, plus one launch) beats both.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu fusion=none" byoc-max-regions=false tvm-max-depth=1 launch-penalty=0.5 mock-costs="tvm:1,test:0.8"}' | filecheck %s --check-prefix=REGION
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu fusion=none" byoc-max-regions=false tvm-max-depth=1 tvm-max-regions=false launch-penalty=0.5 mock-costs="tvm:1,test:0.8"}' | filecheck %s --check-prefix=NO-REGION

// REGION-LABEL: func.func @four
// REGION-NEXT:    %d = collage.kernel "tvm"(%x) {label = "relu", cost = 3.439000e+00 : f64}
// REGION-COUNT-4:   collage.relu
// REGION-NOT:     collage.kernel
// REGION:         func.return %d

// NO-REGION-LABEL: func.func @four
// NO-REGION-COUNT-4: collage.kernel "test"({{%[a-z]}}) {label = "relu", cost = 8.000000e-01 : f64}
// NO-REGION-NOT:     collage.kernel
func.func @four(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %d = collage.relu %c : tensor<4xf32>
  func.return %d : tensor<4xf32>
}

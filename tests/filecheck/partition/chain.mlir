// A relu chain: the tvm and test max depths decide who fuses it; equal per-op costs.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false tvm-max-depth=4 byoc-max-depth=2 mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=CHAIN-TVM
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false tvm-max-depth=1 byoc-max-depth=4 mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=CHAIN-TEST
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false tvm-max-depth=2 byoc-max-depth=2 mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=CHAIN-HALVES

// CHAIN-TVM-LABEL: func.func @chain
// CHAIN-TVM-NEXT:    %d = collage.kernel "tvm"(%x) {label = "relu", cost = 3.439000e+00 : f64}
// CHAIN-TVM-NOT:     collage.kernel
// CHAIN-TVM:         func.return %d

// CHAIN-TEST-LABEL: func.func @chain
// CHAIN-TEST-NEXT:    %d = collage.kernel "test"(%x) {label = "relu", cost = 3.439000e+00 : f64}
// CHAIN-TEST-NOT:     collage.kernel
// CHAIN-TEST:         func.return %d

// Two kernels of depth 2; MaxCoalesce keeps them apart (the merge would exceed depth 2).
// CHAIN-HALVES-LABEL: func.func @chain
// CHAIN-HALVES-NEXT:    %b = collage.kernel "tvm"(%x) {label = "relu", cost = 1.900000e+00 : f64}
// CHAIN-HALVES:         %d = collage.kernel "tvm"(%b) {label = "relu", cost = 1.900000e+00 : f64}
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %d = collage.relu %c : tensor<4xf32>
  func.return %d : tensor<4xf32>
}

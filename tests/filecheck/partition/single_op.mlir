// Collage partitioning with the mock estimator and the toy `test` backend: a single op
// goes to the cheaper side, and becomes a `collage.kernel` region.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:2,test:1"}' | filecheck %s --check-prefix=SINGLE-TEST
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:1,test:2"}' | filecheck %s --check-prefix=SINGLE-TVM

// SINGLE-TEST-LABEL: func.func @single
// SINGLE-TEST-NEXT:    %a = collage.kernel "test"(%x) {label = "relu", cost = 1.000000e+00 : f64} : (tensor<4xf32>) -> tensor<4xf32> {
// SINGLE-TEST-NEXT:    ^bb0(%x_1: tensor<4xf32>):
// SINGLE-TEST-NEXT:      %a_1 = collage.relu %x_1 : tensor<4xf32>
// SINGLE-TEST-NEXT:      collage.yield %a_1 : tensor<4xf32>
// SINGLE-TEST-NEXT:    }
// SINGLE-TEST-NEXT:    func.return %a : tensor<4xf32>

// SINGLE-TVM-LABEL: func.func @single
// SINGLE-TVM-NEXT:    %a = collage.kernel "tvm"(%x) {label = "relu", cost = 1.000000e+00 : f64}
func.func @single(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

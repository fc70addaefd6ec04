// Tuples are built on the host, outside the kernels.
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,add,concat" mock-costs="tvm:2,test:1"}' | filecheck %s

// Output tuple: the host builds it outside the kernel, which has two results.
// CHECK-LABEL: func.func @out_tuple
// CHECK-NEXT:    %a, %b = collage.kernel "test"(%x) {label = "relu_add", cost = 1.900000e+00 : f64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK:           collage.yield %a_1, %b_1 : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %t = collage.tuple %a, %b
// CHECK-NEXT:    func.return %t
func.func @out_tuple(%x: tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.add %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = collage.tuple %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  func.return %t : tuple<tensor<4xf32>, tensor<4xf32>>
}

// -----

// An intermediate tuple feeding concatenate stays on the host too.
// CHECK-LABEL: func.func @mid_tuple
// CHECK:         %a = collage.kernel "test"(%x)
// CHECK:         %b = collage.kernel "test"(%y)
// CHECK:         %t = collage.tuple %a, %b
// CHECK-NEXT:    %c = collage.kernel "test"(%t) {label = "concat", cost = 1.000000e+00 : f64} : (tuple<tensor<4xf32>, tensor<4xf32>>) -> tensor<8xf32> {
// CHECK-NEXT:    ^bb0(%t_1: tuple<tensor<4xf32>, tensor<4xf32>>):
// CHECK-NEXT:      %c_1 = collage.concat %t_1
func.func @mid_tuple(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<8xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %y : tensor<4xf32>
  %t = collage.tuple %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  %c = collage.concat %t {axis = 0 : i64} : (tuple<tensor<4xf32>, tensor<4xf32>>) -> tensor<8xf32>
  func.return %c : tensor<8xf32>
}

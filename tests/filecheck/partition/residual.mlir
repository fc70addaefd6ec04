// A double residual: sigmoid only runs on tvm, so a relu and the add after its sigmoid
// cannot share a test kernel (the path through the tvm sigmoid would leave and re-enter);
// MaxCoalesce keeps them apart too.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,add" mock-costs="tvm:2,test:1"}' | filecheck %s

// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    %a = collage.kernel "test"(%x) {label = "relu"
// CHECK:         %s = collage.kernel "tvm"(%a) {label = "sigmoid"
// CHECK:         %c = collage.kernel "test"(%a, %s) {label = "add_relu"
// CHECK:         %u = collage.kernel "tvm"(%c) {label = "sigmoid"
// CHECK:         %d = collage.kernel "test"(%c, %u) {label = "add"
// CHECK:         func.return %d
func.func @residual(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %s = collage.sigmoid %a : tensor<4xf32>
  %b = collage.add %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %u = collage.sigmoid %c : tensor<4xf32>
  %d = collage.add %c, %u : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

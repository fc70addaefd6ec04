// collage-assign to a backend that cannot run every op is one error line naming an op it
// cannot run and its node.
// RUN: not collage-opt %s -p 'collage-assign{backend=test backend-options="test: ops=relu,add"}' 2>&1 | filecheck %s

// CHECK: error: {{.*}}assign_errors.mlir: collage-assign: backend 'test' does not support collage.sigmoid (node %s in @main)
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> {
  %a = collage.relu %x : tensor<4xf32>
  %s = collage.sigmoid %a : tensor<4xf32>
  %b = collage.add %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = collage.reduce_max %b {keepdims = true} : tensor<4xf32> -> tensor<1xf32>
  %d = collage.sub %y, %m : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %t = collage.tuple %b, %d : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  func.return %t : tuple<tensor<4xf32>, tensor<4xf32>>
}

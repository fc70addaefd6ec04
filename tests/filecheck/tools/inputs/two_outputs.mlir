func.func @main(%x: tensor<2x3xf32>, %i: tensor<2xi64>) -> (tensor<2x3xf32>, tensor<2xi1>) {
  %r = collage.relu %x : tensor<2x3xf32>
  %t = collage.constant dense<[[1, 0], [0, 1], [1, 1]]> : tensor<3x2xi64>
  %g = collage.gather %t, %i {axis = 0 : i64} : (tensor<3x2xi64>, tensor<2xi64>) -> tensor<2x2xi64>
  %c = collage.constant dense<0> : tensor<2xi64>
  %s = collage.reduce_sum %g {axes = array<i64: 1>, keepdims = false} : tensor<2x2xi64> -> tensor<2xi64>
  %b = collage.greater %s, %c : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
  func.return %r, %b : tensor<2x3xf32>, tensor<2xi1>
}

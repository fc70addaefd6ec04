// collage-fold-batch-norm: an inference batch norm after a constant-weight conv2d or matmul
// (and its constant bias add) becomes new weights and one bias add.
// RUN: collage-opt %s --split-input-file -p collage-fold-batch-norm | filecheck %s

// conv2d + batch_norm: inv = s / sqrt(v + eps) = [1, 2] scales the output channels of the
// weight; the bias is (0 - m) * inv + t. The old weight and parameters are erased.
// CHECK-LABEL: func.func @conv_bn
// CHECK-NEXT:    %0 = collage.constant dense<[[[[1.000000e+00]]], [[[4.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %1 = collage.constant dense<[[[5.000000e-01]], [[-1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %c = collage.conv2d %x, %0
// CHECK-NEXT:    %n = collage.add %c, %1 : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %n
func.func @conv_bn(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = collage.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %s = collage.constant dense<[2.0, 8.0]> : tensor<2xf32>
  %t = collage.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %m = collage.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = collage.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %n = collage.batch_norm %c, %s, %t, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %n : tensor<1x2x2x2xf32>
}

// -----

// conv2d + bias add (the ONNX Conv bias) + batch_norm: the bias [3, 1] folds in too,
// (b - m) * inv + t = [3.5, 1]; the old add is gone.
// CHECK-LABEL: func.func @conv_bias_bn
// CHECK-NEXT:    %0 = collage.constant dense<[[[[1.000000e+00]]], [[[4.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %1 = collage.constant dense<[[[3.500000e+00]], [[1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %c = collage.conv2d %x, %0
// CHECK-NEXT:    %n = collage.add %c, %1
// CHECK-NEXT:    func.return %n
func.func @conv_bias_bn(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = collage.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = collage.constant dense<[[[3.0]], [[1.0]]]> : tensor<2x1x1xf32>
  %s = collage.constant dense<[2.0, 8.0]> : tensor<2xf32>
  %t = collage.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %m = collage.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = collage.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %a = collage.add %b, %c : (tensor<2x1x1xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %n = collage.batch_norm %a, %s, %t, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %n : tensor<1x2x2x2xf32>
}

// -----

// An ONNX Gemm (matmul + bias add) + batch_norm: a 2-D result's channels are the weight's
// columns.
// CHECK-LABEL: func.func @gemm_bn
// CHECK-NEXT:    %0 = collage.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [3.000000e+00, 8.000000e+00]]> : tensor<2x2xf32>
// CHECK-NEXT:    %1 = collage.constant dense<[1.500000e+00, 1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %mm = collage.matmul %x, %0
// CHECK-NEXT:    %n = collage.add %mm, %1 : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %n
func.func @gemm_bn(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = collage.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = collage.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %s = collage.constant dense<[2.0, 8.0]> : tensor<2xf32>
  %t = collage.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %m = collage.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = collage.constant dense<[3.0, 15.0]> : tensor<2xf32>
  %mm = collage.matmul %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g = collage.add %mm, %b : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %n = collage.batch_norm %g, %s, %t, %m, %v {epsilon = 1.0 : f32} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %n : tensor<3x2xf32>
}

// -----

// Not folded: the conv2d has another user, a parameter is an argument, the bias add is
// not per channel, and a matmul's 3-D result has its columns on axis 2, not 1.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: collage.batch_norm
// CHECK-NOT:     collage.batch_norm
// CHECK:         func.return
func.func @kept(%x: tensor<1x1x2x2xf32>, %sa: tensor<2xf32>, %y: tensor<2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<2x2x2xf32>) {
  %w = collage.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %p = collage.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %hw = collage.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %n = collage.batch_norm %c, %p, %p, %p, %p {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %c2 = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %n2 = collage.batch_norm %c2, %sa, %p, %p, %p {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %c3 = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %a3 = collage.add %c3, %hw : (tensor<1x2x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2x2xf32>
  %n3 = collage.batch_norm %a3, %p, %p, %p, %p {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %mm = collage.matmul %y, %hw : (tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<2x2x2xf32>
  %n4 = collage.batch_norm %mm, %p, %p, %p, %p {epsilon = 1.0 : f32} : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  func.return %n, %c, %n2, %n3, %n4 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<2x2x2xf32>
}

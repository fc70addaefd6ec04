// collage-fold-constants: ops on constants become constants; constant Mul / Add chains fold
// into each other and into conv2d / matmul weights.
// RUN: collage-opt %s --split-input-file -p collage-fold-constants | filecheck %s

// An op whose operands are all constants is evaluated (by the reference interpreter).
// CHECK-LABEL: func.func @evaluate
// CHECK-NEXT:    %s = collage.constant dense<[4.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %r = collage.add %x, %s
// CHECK-NEXT:    func.return %r
func.func @evaluate(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = collage.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = collage.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %s = collage.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %r = collage.add %x, %s : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}

// -----

// add(add(x, c1), c2) -> add(x, c1 + c2), the constants on either side; likewise mul. A
// scalar and a row broadcast to the row's shape.
// CHECK-LABEL: func.func @chains
// CHECK-NEXT:    %0 = collage.constant dense<[1.100000e+01, 1.200000e+01]> : tensor<2xf32>
// CHECK-NEXT:    %b = collage.add %x, %0 : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %1 = collage.constant dense<[2.000000e+01, 4.000000e+01]> : tensor<2xf32>
// CHECK-NEXT:    %d = collage.mul %b, %1 : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %d
func.func @chains(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %c1 = collage.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c2 = collage.constant dense<10.0> : tensor<f32>
  %c3 = collage.constant dense<[2.0, 4.0]> : tensor<2xf32>
  %a = collage.add %x, %c1 : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %b = collage.add %c2, %a : (tensor<f32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %c = collage.mul %b, %c3 : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %d = collage.mul %c, %c2 : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  func.return %d : tensor<3x2xf32>
}

// -----

// A per-output-channel scale of a conv2d folds into its weight, W * [3, 5]; the scalar
// scale after the bias add is pushed through the add (the bias is scaled too), then folded
// the same way: W * [3, 5] * 0.5 and b * 0.5.
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %0 = collage.constant dense<[[[[1.500000e+00]]], [[[5.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %m = collage.conv2d %x, %0
// CHECK-NEXT:    %1 = collage.constant dense<[[[5.000000e-01]], [[1.000000e+00]]]> : tensor<2x1x1xf32>
// CHECK-NEXT:    %s = collage.add %m, %1 : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:    func.return %s
func.func @conv(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = collage.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %c = collage.constant dense<[[[3.0]], [[5.0]]]> : tensor<2x1x1xf32>
  %h = collage.constant dense<0.5> : tensor<f32>
  %b = collage.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %y = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m = collage.mul %y, %c : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %a = collage.add %m, %b : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %s = collage.mul %h, %a : (tensor<f32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %s : tensor<1x2x2x2xf32>
}

// -----

// A per-column scale of a matmul by a 2-D constant folds into the weight's columns.
// CHECK-LABEL: func.func @matmul
// CHECK-NEXT:    %0 = collage.constant dense<{{\[}}[1.000000e+00, 2.000000e+01], [3.000000e+00, 4.000000e+01]]> : tensor<2x2xf32>
// CHECK-NEXT:    %s = collage.matmul %x, %0
// CHECK-NEXT:    func.return %s
func.func @matmul(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = collage.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %c = collage.constant dense<[[1.0, 10.0]]> : tensor<1x2xf32>
  %y = collage.matmul %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %s = collage.mul %y, %c : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  func.return %s : tensor<3x2xf32>
}

// -----

// Not folded: a scale that varies over the spatial axes, a scale that would broadcast
// the result bigger, a conv2d with another user, and a weight that is an argument.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: collage.mul
// CHECK-NOT:     collage.mul
// CHECK:         func.return
func.func @kept(%x: tensor<1x1x2x2xf32>, %v: tensor<2x1x1x1xf32>) -> (tensor<1x2x2x2xf32>, tensor<2x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = collage.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %hw = collage.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %big = collage.constant dense<2.0> : tensor<2x1x1x1xf32>
  %c = collage.constant dense<[[[3.0]], [[5.0]]]> : tensor<2x1x1xf32>
  %y1 = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m1 = collage.mul %y1, %hw : (tensor<1x2x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2x2xf32>
  %y2 = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m2 = collage.mul %y2, %big : (tensor<1x2x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<2x2x2x2xf32>
  %y3 = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m3 = collage.mul %y3, %c : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %y4 = collage.conv2d %x, %v {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %m4 = collage.mul %y4, %c : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  func.return %m1, %m2, %m3, %y3, %m4 : tensor<1x2x2x2xf32>, tensor<2x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

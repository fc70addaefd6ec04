// RUN: collage-opt %s | collage-opt | filecheck %s
// RUN: collage-opt %s --print-op-generic | collage-opt | filecheck %s

// float16 ops in their custom form survive printing and re-parsing, in custom and generic
// form: f16 constants (inline, splat and by reference), casts to and from f32, a convolution, a matmul,
// normalizations with f16 scales, a reduction and a softmax.

// CHECK:      func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf16>, %m: tensor<2x8xf16>, %s: tensor<8xf16>, %k: tensor<8x8xf16>) -> (tensor<1x3x2x2xf32>, tensor<2x8xf16>, tensor<2x1xf16>) {
// CHECK-NEXT:   %c0 = collage.constant dense<[1.500000e+00, -2.000000e+00, 6.250000e-02]> : tensor<3xf16>
// CHECK-NEXT:   %c1 = collage.constant dense<5.000000e-01> : tensor<1x3x1x1xf16>
// CHECK-NEXT:   %c2 = collage.constant #collage.weight<"0123456789abcdef0123456789abcdef"> : tensor<64x64xf16>
// CHECK-NEXT:   %h = collage.cast %x : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf16>
// CHECK-NEXT:   %cv = collage.conv2d %h, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf16>, tensor<3x2x3x3xf16>) -> tensor<1x3x2x2xf16>
// CHECK-NEXT:   %b = collage.add %cv, %c1 : (tensor<1x3x2x2xf16>, tensor<1x3x1x1xf16>) -> tensor<1x3x2x2xf16>
// CHECK-NEXT:   %bn = collage.batch_norm %b, %c0, %c0, %c0, %c0 {epsilon = 1.000000e-03 : f32} : (tensor<1x3x2x2xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x3x2x2xf16>
// CHECK-NEXT:   %in = collage.instance_norm %bn, %c0, %c0 {epsilon = 1.000000e-05 : f32} : (tensor<1x3x2x2xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x3x2x2xf16>
// CHECK-NEXT:   %y = collage.cast %in : tensor<1x3x2x2xf16> -> tensor<1x3x2x2xf32>
// CHECK-NEXT:   %mm = collage.matmul %m, %k : (tensor<2x8xf16>, tensor<8x8xf16>) -> tensor<2x8xf16>
// CHECK-NEXT:   %ln = collage.layer_norm %mm, %s, %s {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
// CHECK-NEXT:   %sm = collage.softmax %ln {axis = 1 : i64} : tensor<2x8xf16>
// CHECK-NEXT:   %rs = collage.reduce_sum %sm {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf16> -> tensor<2x1xf16>
// CHECK-NEXT:   func.return %y, %sm, %rs : tensor<1x3x2x2xf32>, tensor<2x8xf16>, tensor<2x1xf16>
func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x3x3xf16>, %m: tensor<2x8xf16>, %s: tensor<8xf16>, %k: tensor<8x8xf16>) -> (tensor<1x3x2x2xf32>, tensor<2x8xf16>, tensor<2x1xf16>) {
  %c0 = collage.constant dense<[1.5, -2.0, 0.0625]> : tensor<3xf16>
  %c1 = collage.constant dense<0.5> : tensor<1x3x1x1xf16>
  %c2 = collage.constant #collage.weight<"0123456789abcdef0123456789abcdef"> : tensor<64x64xf16>
  %h = collage.cast %x : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf16>
  %cv = collage.conv2d %h, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf16>, tensor<3x2x3x3xf16>) -> tensor<1x3x2x2xf16>
  %b = collage.add %cv, %c1 : (tensor<1x3x2x2xf16>, tensor<1x3x1x1xf16>) -> tensor<1x3x2x2xf16>
  %bn = collage.batch_norm %b, %c0, %c0, %c0, %c0 {epsilon = 1.0e-03 : f32} : (tensor<1x3x2x2xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x3x2x2xf16>
  %in = collage.instance_norm %bn, %c0, %c0 {epsilon = 1.0e-05 : f32} : (tensor<1x3x2x2xf16>, tensor<3xf16>, tensor<3xf16>) -> tensor<1x3x2x2xf16>
  %y = collage.cast %in : tensor<1x3x2x2xf16> -> tensor<1x3x2x2xf32>
  %mm = collage.matmul %m, %k : (tensor<2x8xf16>, tensor<8x8xf16>) -> tensor<2x8xf16>
  %ln = collage.layer_norm %mm, %s, %s {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x8xf16>
  %sm = collage.softmax %ln {axis = 1 : i64} : tensor<2x8xf16>
  %rs = collage.reduce_sum %sm {axes = array<i64: 1>, keepdims = true} : tensor<2x8xf16> -> tensor<2x1xf16>
  func.return %y, %sm, %rs : tensor<1x3x2x2xf32>, tensor<2x8xf16>, tensor<2x1xf16>
}

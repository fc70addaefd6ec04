// RUN: collage-opt %s | collage-opt | filecheck %s
// RUN: collage-opt %s --print-op-generic | collage-opt | filecheck %s

// Every collage op in its custom form survives printing and re-parsing, in custom and generic form.

func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %m: tensor<2x3xf32>,
                %n: tensor<3x5xf32>, %b: tensor<2x3xi1>, %idx: tensor<2xi64>) {
  // CHECK:      %c0 = collage.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
  // CHECK-NEXT: %c1 = collage.constant dense<7> : tensor<2x3xi64>
  // CHECK-NEXT: %c2 = collage.constant #collage.weight<"0123456789abcdef0123456789abcdef"> : tensor<64x64xf32>
  %c0 = collage.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %c1 = collage.constant dense<7> : tensor<2x3xi64>
  %c2 = collage.constant #collage.weight<"0123456789abcdef0123456789abcdef"> : tensor<64x64xf32>

  // CHECK-NEXT: %t = collage.tuple %m, %n : (tensor<2x3xf32>, tensor<3x5xf32>) -> tuple<tensor<2x3xf32>, tensor<3x5xf32>>
  // CHECK-NEXT: %g = collage.get_item %t {index = 1 : i64} : (tuple<tensor<2x3xf32>, tensor<3x5xf32>>) -> tensor<3x5xf32>
  %t = collage.tuple %m, %n : (tensor<2x3xf32>, tensor<3x5xf32>) -> tuple<tensor<2x3xf32>, tensor<3x5xf32>>
  %g = collage.get_item %t {index = 1 : i64} : (tuple<tensor<2x3xf32>, tensor<3x5xf32>>) -> tensor<3x5xf32>

  // CHECK-NEXT: %u0 = collage.relu %m : tensor<2x3xf32>
  // CHECK-NEXT: %u1 = collage.sigmoid %m : tensor<2x3xf32>
  // CHECK-NEXT: %u2 = collage.tanh %m : tensor<2x3xf32>
  // CHECK-NEXT: %u3 = collage.erf %m : tensor<2x3xf32>
  // CHECK-NEXT: %u4 = collage.exp %m : tensor<2x3xf32>
  // CHECK-NEXT: %u5 = collage.log %m : tensor<2x3xf32>
  // CHECK-NEXT: %u6 = collage.sqrt %m : tensor<2x3xf32>
  // CHECK-NEXT: %u7 = collage.reciprocal %m : tensor<2x3xf32>
  // CHECK-NEXT: %u8 = collage.neg %m : tensor<2x3xf32>
  // CHECK-NEXT: %u9 = collage.abs %m : tensor<2x3xf32>
  // CHECK-NEXT: %u10 = collage.not %b : tensor<2x3xi1>
  // CHECK-NEXT: %u11 = collage.leaky_relu %m {alpha = 1.000000e-01 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %a0 = collage.hard_sigmoid %m {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %a1 = collage.hard_swish %m : tensor<2x3xf32>
  // CHECK-NEXT: %a2 = collage.mish %m : tensor<2x3xf32>
  // CHECK-NEXT: %a3 = collage.elu %m {alpha = 1.000000e+00 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %a4 = collage.softplus %m : tensor<2x3xf32>
  // CHECK-NEXT: %a5 = collage.selu %m {alpha = 1.500000e+00 : f32, gamma = 1.250000e+00 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %a6 = collage.prelu %m, %c0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %u12 = collage.clip %m {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %u13 = collage.clip %m {max = 6.000000e+00 : f32} : tensor<2x3xf32>
  // CHECK-NEXT: %u14 = collage.gelu %m : tensor<2x3xf32>
  // CHECK-NEXT: %u15 = collage.gelu %m {approximate = "tanh"} : tensor<2x3xf32>
  // CHECK-NEXT: %u16 = collage.cast %c1 : tensor<2x3xi64> -> tensor<2x3xf32>
  %u0 = collage.relu %m : tensor<2x3xf32>
  %u1 = collage.sigmoid %m : tensor<2x3xf32>
  %u2 = collage.tanh %m : tensor<2x3xf32>
  %u3 = collage.erf %m : tensor<2x3xf32>
  %u4 = collage.exp %m : tensor<2x3xf32>
  %u5 = collage.log %m : tensor<2x3xf32>
  %u6 = collage.sqrt %m : tensor<2x3xf32>
  %u7 = collage.reciprocal %m : tensor<2x3xf32>
  %u8 = collage.neg %m : tensor<2x3xf32>
  %u9 = collage.abs %m : tensor<2x3xf32>
  %u10 = collage.not %b : tensor<2x3xi1>
  %u11 = collage.leaky_relu %m {alpha = 1.000000e-01 : f32} : tensor<2x3xf32>
  %a0 = collage.hard_sigmoid %m {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<2x3xf32>
  %a1 = collage.hard_swish %m : tensor<2x3xf32>
  %a2 = collage.mish %m : tensor<2x3xf32>
  %a3 = collage.elu %m {alpha = 1.000000e+00 : f32} : tensor<2x3xf32>
  %a4 = collage.softplus %m : tensor<2x3xf32>
  %a5 = collage.selu %m {alpha = 1.500000e+00 : f32, gamma = 1.250000e+00 : f32} : tensor<2x3xf32>
  %a6 = collage.prelu %m, %c0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %u12 = collage.clip %m {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3xf32>
  %u13 = collage.clip %m {max = 6.000000e+00 : f32} : tensor<2x3xf32>
  %u14 = collage.gelu %m : tensor<2x3xf32>
  %u15 = collage.gelu %m {approximate = "tanh"} : tensor<2x3xf32>
  %u16 = collage.cast %c1 : tensor<2x3xi64> -> tensor<2x3xf32>

  // CHECK-NEXT: %b0 = collage.add %m, %c0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %b1 = collage.sub %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %b2 = collage.mul %m, %c0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %b3 = collage.div %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %b4 = collage.pow %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %b5 = collage.maximum %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %b6 = collage.minimum %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %b7 = collage.equal %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %b8 = collage.less %m, %c0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %b9 = collage.greater %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %b10 = collage.where %b, %m, %c0 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %b11 = collage.expand %c0 : tensor<3xf32> -> tensor<2x3xf32>
  %b0 = collage.add %m, %c0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b1 = collage.sub %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b2 = collage.mul %m, %c0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b3 = collage.div %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b4 = collage.pow %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b5 = collage.maximum %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b6 = collage.minimum %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %b7 = collage.equal %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %b8 = collage.less %m, %c0 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %b9 = collage.greater %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %b10 = collage.where %b, %m, %c0 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b11 = collage.expand %c0 : tensor<3xf32> -> tensor<2x3xf32>

  // CHECK-NEXT: %sc = collage.constant dense<1.000000e+00> : tensor<4xf32>
  // CHECK-NEXT: %bn = collage.batch_norm %x, %sc, %sc, %sc, %sc {epsilon = 1.000000e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %sc = collage.constant dense<1.0> : tensor<4xf32>
  %bn = collage.batch_norm %x, %sc, %sc, %sc, %sc {epsilon = 1.000000e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>

  // CHECK-NEXT: %i0 = collage.reshape %m : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK-NEXT: %i1 = collage.transpose %m {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  // CHECK-NEXT: %i2 = collage.concat %m, %m {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  // CHECK-NEXT: %tm = collage.tuple %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tuple<tensor<2x3xf32>, tensor<2x3xf32>>
  // CHECK-NEXT: %i3 = collage.concat %tm {axis = -1 : i64} : (tuple<tensor<2x3xf32>, tensor<2x3xf32>>) -> tensor<2x6xf32>
  // CHECK-NEXT: %i4, %i5 = collage.split %n {axis = 1 : i64, sizes = array<i64: 2, 3>} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x3xf32>)
  // CHECK-NEXT: %i6 = collage.slice %n {starts = array<i64: 1>, ends = array<i64: 100>, axes = array<i64: 1>, steps = array<i64: 2>} : tensor<3x5xf32> -> tensor<3x2xf32>
  // CHECK-NEXT: %i7 = collage.gather %n, %idx {axis = 0 : i64} : (tensor<3x5xf32>, tensor<2xi64>) -> tensor<2x5xf32>
  // CHECK-NEXT: %i8 = collage.pad %m {pads = array<i64: 0, 1, 0, 2>, value = 0.000000e+00 : f32} : tensor<2x3xf32> -> tensor<2x6xf32>
  // CHECK-NEXT: %i9 = collage.tile %m {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  // CHECK-NEXT: %rs0 = collage.resize %x {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f32: 2.000000e+00, 1.500000e+00>} : tensor<1x4x8x8xf32> -> tensor<1x4x16x12xf32>
  // CHECK-NEXT: %rs1 = collage.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel"} : tensor<1x4x8x8xf32> -> tensor<1x4x5x11xf32>
  %i0 = collage.reshape %m : tensor<2x3xf32> -> tensor<3x2xf32>
  %i1 = collage.transpose %m {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %i2 = collage.concat %m, %m {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %tm = collage.tuple %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tuple<tensor<2x3xf32>, tensor<2x3xf32>>
  %i3 = collage.concat %tm {axis = -1 : i64} : (tuple<tensor<2x3xf32>, tensor<2x3xf32>>) -> tensor<2x6xf32>
  %i4, %i5 = collage.split %n {axis = 1 : i64, sizes = array<i64: 2, 3>} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x3xf32>)
  %i6 = collage.slice %n {starts = array<i64: 1>, ends = array<i64: 100>, axes = array<i64: 1>, steps = array<i64: 2>} : tensor<3x5xf32> -> tensor<3x2xf32>
  %i7 = collage.gather %n, %idx {axis = 0 : i64} : (tensor<3x5xf32>, tensor<2xi64>) -> tensor<2x5xf32>
  %i8 = collage.pad %m {pads = array<i64: 0, 1, 0, 2>, value = 0.000000e+00 : f32} : tensor<2x3xf32> -> tensor<2x6xf32>
  %i9 = collage.tile %m {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  %rs0 = collage.resize %x {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f32: 2.0, 1.5>} : tensor<1x4x8x8xf32> -> tensor<1x4x16x12xf32>
  %rs1 = collage.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel"} : tensor<1x4x8x8xf32> -> tensor<1x4x5x11xf32>

  // CHECK-NEXT: %r0 = collage.reduce_sum %m {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  // CHECK-NEXT: %r1 = collage.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  // CHECK-NEXT: %r2 = collage.reduce_max %m {keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  %r0 = collage.reduce_sum %m {axes = array<i64: 1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  %r1 = collage.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  %r2 = collage.reduce_max %m {keepdims = false} : tensor<2x3xf32> -> tensor<f32>

  // CHECK-NEXT: %r3 = collage.reduce_min %x {axes = array<i64: 1>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x1x8x8xf32>
  // CHECK-NEXT: %r4 = collage.reduce_l2 %m {axes = array<i64: -1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  // CHECK-NEXT: %r5 = collage.argmax %m {axis = 1 : i64, keepdims = true} : tensor<2x3xf32> -> tensor<2x1xi64>
  %r3 = collage.reduce_min %x {axes = array<i64: 1>, keepdims = true} : tensor<1x4x8x8xf32> -> tensor<1x1x8x8xf32>
  %r4 = collage.reduce_l2 %m {axes = array<i64: -1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  %r5 = collage.argmax %m {axis = 1 : i64, keepdims = true} : tensor<2x3xf32> -> tensor<2x1xi64>

  // CHECK-NEXT: %o0 = collage.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32>
  // CHECK-NEXT: %o1 = collage.matmul %m, %n : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  // CHECK-NEXT: %o2 = collage.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, ceil_mode = false} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %o3 = collage.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true, count_include_pad = false} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %o4 = collage.global_avg_pool2d %x : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  // CHECK-NEXT: %o5 = collage.conv_transpose2d %o0, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x6x4x4xf32>, tensor<6x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %o0 = collage.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32>
  %o1 = collage.matmul %m, %n : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  %o2 = collage.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, ceil_mode = false} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %o3 = collage.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true, count_include_pad = false} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %o4 = collage.global_avg_pool2d %x : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  %o5 = collage.conv_transpose2d %o0, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x6x4x4xf32>, tensor<6x4x3x3xf32>) -> tensor<1x4x8x8xf32>

  // CHECK-NEXT: %q0 = collage.softmax %m {axis = -1 : i64} : tensor<2x3xf32>
  // CHECK-NEXT: %q1 = collage.lrn %x {size = 3 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : tensor<1x4x8x8xf32>
  // CHECK-NEXT: %q2 = collage.layer_norm %m, %c0, %c0 {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %q0 = collage.softmax %m {axis = -1 : i64} : tensor<2x3xf32>
  %q1 = collage.lrn %x {size = 3 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : tensor<1x4x8x8xf32>
  %q2 = collage.layer_norm %m, %c0, %c0 {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>

  // CHECK-NEXT: %c4 = collage.constant dense<1.000000e+00> : tensor<4xf32>
  // CHECK-NEXT: %q3 = collage.instance_norm %x, %c4, %c4 {epsilon = 1.000000e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  // CHECK-NEXT: %q4 = collage.group_norm %x, %c4, %c4 {num_groups = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %c4 = collage.constant dense<1.0> : tensor<4xf32>
  %q3 = collage.instance_norm %x, %c4, %c4 {epsilon = 1.000000e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %q4 = collage.group_norm %x, %c4, %c4 {num_groups = 2 : i64, epsilon = 1.000000e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// RUN: collage-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Each op family rejects bad shapes and attributes with a diagnostic on the op.

// conv2d channel mismatch
// CHECK:      %r = "collage.conv2d"(%x, %w)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: weight [4, 2, 3, 3] with group 1 does not fit 3 input channels
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  %r = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

// conv2d group does not divide the channels
// CHECK:      %r = "collage.conv2d"(%x, %w)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: weight [6, 2, 3, 3] with group 3 does not fit 4 input channels
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  %r = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

// conv2d zero group
// CHECK:      %r = "collage.conv2d"(%x, %w)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: strides, dilations and group must be positive, pads >= 0
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  %r = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

// conv2d strides of the wrong length
// CHECK:      %r = "collage.conv2d"(%x, %w)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: strides and dilations need 2 values, pads 4
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  %r = collage.conv2d %x, %w {strides = array<i64: 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

// conv2d missing attribute
// CHECK:      %r = "collage.conv2d"(%x, %w)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: attribute 'group' expected in operation 'collage.conv2d'
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  %r = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

// conv2d wrong result type
// CHECK:      %r = "collage.conv2d"(%x, %w)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result types tensor<1x6x6x6xf32> do not match the inferred tensor<1x6x3x3xf32>
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  %r = collage.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return
}

// -----

// conv_transpose2d weight for other input channels
// CHECK:      %r = "collage.conv_transpose2d"(%x, %w)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: weight [6, 2, 3, 3] with group 2 does not fit 4 input channels
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  %r = collage.conv_transpose2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x4x10x10xf32>
  func.return
}

// -----

// conv_transpose2d output_padding not below the strides
// CHECK:      %r = "collage.conv_transpose2d"(%x, %w)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: output_padding [2, 0] must be >= 0 and below the strides [2, 2]
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  %r = collage.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 2, 0>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x19x17xf32>
  func.return
}

// -----

// conv_transpose2d wrong result type (output channels are weight dim 1 times group)
// CHECK:      %r = "collage.conv_transpose2d"(%x, %w)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result types tensor<1x2x17x17xf32> do not match the inferred tensor<1x4x17x17xf32>
func.func @f(%x: tensor<1x4x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  %r = collage.conv_transpose2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x17x17xf32>
  func.return
}

// -----

// matmul contracting dimensions differ
// CHECK:      %r = "collage.matmul"(%a, %b)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: contracting dimensions differ: [2, 3] x [4, 5]
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  %r = collage.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

// transpose perm is not a permutation
// CHECK:      %r = "collage.transpose"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: perm [0, 2, 2] is not a permutation of rank 3
func.func @f(%x: tensor<2x3x4xf32>) {
  %r = collage.transpose %x {perm = array<i64: 0, 2, 2>} : tensor<2x3x4xf32> -> tensor<2x4x4xf32>
  func.return
}

// -----

// reshape changes the element count
// CHECK:      %r = "collage.reshape"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: cannot reshape [2, 3] (6 elements) to [7] (7 elements)
func.func @f(%x: tensor<2x3xf32>) {
  %r = collage.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  func.return
}

// -----

// split sizes do not add up
// CHECK:      %a, %b = "collage.split"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: sizes [2, 2] do not split dimension 5
func.func @f(%x: tensor<3x5xf32>) {
  %a, %b = collage.split %x {axis = 1 : i64, sizes = array<i64: 2, 2>} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
  func.return
}

// -----

// concat shapes differ off the axis
// CHECK:      %r = "collage.concat"(%a, %b)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: input shapes {{\[\[}}2, 3], [2, 4]] differ off axis 0
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  %r = collage.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

// concat mixes a tuple with tensors
// CHECK:      %r = "collage.concat"(%a, %t)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: a tuple operand must be the only operand
func.func @f(%a: tensor<2x3xf32>, %t: tuple<tensor<2x3xf32>>) {
  %r = collage.concat %a, %t {axis = 0 : i64} : (tensor<2x3xf32>, tuple<tensor<2x3xf32>>) -> tensor<4x3xf32>
  func.return
}

// -----

// add shapes do not broadcast
// CHECK:      %r = "collage.add"(%a, %b)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: operand shapes [2, 3], [4] do not broadcast
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  %r = collage.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// mul element types differ
// CHECK:      %r = "collage.mul"(%a, %b)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: operands must have one element type, got f32, i64
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xi64>) {
  %r = collage.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  func.return
}

// -----

// less result must be i1
// CHECK:      %r = "collage.less"(%a, %a)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result types tensor<2x3xf32> do not match the inferred tensor<2x3xi1>
func.func @f(%a: tensor<2x3xf32>) {
  %r = collage.less %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// where condition is not i1
// CHECK:      %r = "collage.where"(%c, %a, %a)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: condition must have element type i1
func.func @f(%c: tensor<2x3xf32>, %a: tensor<2x3xf32>) {
  %r = collage.where %c, %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

// expand to a shape the input does not broadcast to
// CHECK:      %r = "collage.expand"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: cannot expand [2, 3] to [4, 3]
func.func @f(%x: tensor<2x3xf32>) {
  %r = collage.expand %x : tensor<2x3xf32> -> tensor<4x3xf32>
  func.return
}

// -----

// reduce axis out of range
// CHECK:      %r = "collage.reduce_sum"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x3xf32>) {
  %r = collage.reduce_sum %x {axes = array<i64: 2>, keepdims = true} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

// reduce repeated axis
// CHECK:      %r = "collage.reduce_mean"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: axes [1, -1] repeat an axis
func.func @f(%x: tensor<2x3xf32>) {
  %r = collage.reduce_mean %x {axes = array<i64: 1, -1>, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

// max_pool2d window larger than the input
// CHECK:      %r = "collage.max_pool2d"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: window 3 (dilation 1) does not fit input size 2
func.func @f(%x: tensor<1x4x2x2xf32>) {
  %r = collage.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x2x2xf32> -> tensor<1x4x1x1xf32>
  func.return
}

// -----

// avg_pool2d zero stride
// CHECK:      %r = "collage.avg_pool2d"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: kernel and strides must be positive, pads >= 0
func.func @f(%x: tensor<1x4x8x8xf32>) {
  %r = collage.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 0, 1>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  func.return
}

// -----

// global_avg_pool2d needs rank 4
// CHECK:      %r = "collage.global_avg_pool2d"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: input must have rank 4, got rank 2
func.func @f(%x: tensor<4x8xf32>) {
  %r = collage.global_avg_pool2d %x : tensor<4x8xf32> -> tensor<4x8x1x1xf32>
  func.return
}

// -----

// slice zero step
// CHECK:      %r = "collage.slice"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: steps must be non-zero
func.func @f(%x: tensor<3x5xf32>) {
  %r = collage.slice %x {starts = array<i64: 0>, ends = array<i64: 5>, axes = array<i64: 1>, steps = array<i64: 0>} : tensor<3x5xf32> -> tensor<3x5xf32>
  func.return
}

// -----

// slice attribute lengths differ
// CHECK:      %r = "collage.slice"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: starts, ends, axes and steps must have one length
func.func @f(%x: tensor<3x5xf32>) {
  %r = collage.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 5>, axes = array<i64: 1>, steps = array<i64: 1>} : tensor<3x5xf32> -> tensor<3x5xf32>
  func.return
}

// -----

// gather float indices
// CHECK:      %r = "collage.gather"(%x, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: indices must be integers
func.func @f(%x: tensor<3x5xf32>, %i: tensor<2xf32>) {
  %r = collage.gather %x, %i {axis = 0 : i64} : (tensor<3x5xf32>, tensor<2xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

// pad wrong number of values
// CHECK:      %r = "collage.pad"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: pads must be 4 non-negative values, got [1, 1]
func.func @f(%x: tensor<3x5xf32>) {
  %r = collage.pad %x {pads = array<i64: 1, 1>} : tensor<3x5xf32> -> tensor<5x5xf32>
  func.return
}

// -----

// get_item index out of range
// CHECK:      %r = "collage.get_item"(%t)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: index 2 is out of range for a tuple of 2
func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  %t = collage.tuple %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tuple<tensor<2xf32>, tensor<3xf32>>
  %r = collage.get_item %t {index = 2 : i64} : (tuple<tensor<2xf32>, tensor<3xf32>>) -> tensor<3xf32>
  func.return
}

// -----

// tuple result type does not match the operands
// CHECK:      %t = "collage.tuple"(%a, %b)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result types tuple<tensor<2xf32>, tensor<2xf32>> do not match the inferred tuple<tensor<2xf32>, tensor<3xf32>>
func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  %t = collage.tuple %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tuple<tensor<2xf32>, tensor<2xf32>>
  func.return
}

// -----

// clip min greater than max
// CHECK:      %r = "collage.clip"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: min 6.0 is greater than max 0.0
func.func @f(%x: tensor<4xf32>) {
  %r = collage.clip %x {min = 6.000000e+00 : f32, max = 0.000000e+00 : f32} : tensor<4xf32>
  func.return
}

// -----

// gelu bad approximate
// CHECK:      %r = "collage.gelu"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: approximate must be "none" or "tanh", got "fast"
func.func @f(%x: tensor<4xf32>) {
  %r = collage.gelu %x {approximate = "fast"} : tensor<4xf32>
  func.return
}

// -----

// sigmoid needs a float operand
// CHECK:      %r = "collage.sigmoid"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: collage.sigmoid needs a floating-point operand
func.func @f(%x: tensor<4xi64>) {
  %r = collage.sigmoid %x : tensor<4xi64>
  func.return
}

// -----

// not needs an i1 operand
// CHECK:      %r = "collage.not"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: collage.not needs an i1 operand
func.func @f(%x: tensor<4xf32>) {
  %r = collage.not %x : tensor<4xf32>
  func.return
}

// -----

// leaky_relu alpha must be a float
// CHECK: 1 : i64 should be of base attribute float
func.func @f(%x: tensor<4xf32>) {
  %r = collage.leaky_relu %x {alpha = 1 : i64} : tensor<4xf32>
  func.return
}

// -----

// hard_swish needs a float operand
// CHECK:      %r = "collage.hard_swish"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: collage.hard_swish needs a floating-point operand
func.func @f(%x: tensor<4xi64>) {
  %r = collage.hard_swish %x : tensor<4xi64>
  func.return
}

// -----

// selu needs both alpha and gamma
// CHECK: Operation does not verify: attribute 'gamma' expected in operation 'collage.selu'
func.func @f(%x: tensor<4xf32>) {
  %r = collage.selu %x {alpha = 1.5 : f32} : tensor<4xf32>
  func.return
}

// -----

// prelu needs float operands
// CHECK:      %r = "collage.prelu"(%x, %s)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: collage.prelu needs floating-point operands
func.func @f(%x: tensor<4xi64>, %s: tensor<4xi64>) {
  %r = collage.prelu %x, %s : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return
}

// -----

// prelu slope broadcasts to the input, not the other way round
// CHECK:      %r = "collage.prelu"(%x, %s)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: slope [2, 1, 4] does not broadcast to input [3, 4]
func.func @f(%x: tensor<3x4xf32>, %s: tensor<2x1x4xf32>) {
  %r = collage.prelu %x, %s : (tensor<3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

// cast keeps the shape
// CHECK:      %r = "collage.cast"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result types tensor<2x2xf32> do not match the inferred tensor<4xf32>
func.func @f(%x: tensor<4xi64>) {
  %r = collage.cast %x : tensor<4xi64> -> tensor<2x2xf32>
  func.return
}

// -----

// batch_norm parameter shape
// CHECK:      %r = "collage.batch_norm"(%x, %s, %s, %s, %v)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: var must have shape [4], got [3]
func.func @f(%x: tensor<1x4x8x8xf32>, %s: tensor<4xf32>, %v: tensor<3xf32>) {
  %r = collage.batch_norm %x, %s, %s, %s, %v {epsilon = 1.000000e-05 : f32} : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

// layer_norm scale shape
// CHECK:      %r = "collage.layer_norm"(%x, %s, %b)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: scale shape [4] does not broadcast to [8]
func.func @f(%x: tensor<2x8xf32>, %s: tensor<4xf32>, %b: tensor<8xf32>) {
  %r = collage.layer_norm %x, %s, %b {axis = -1 : i64, epsilon = 1.000000e-05 : f32} : (tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  func.return
}

// -----

// argmax result must be i64
// CHECK:      %r = "collage.argmax"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result types tensor<2xf32> do not match the inferred tensor<2xi64>
func.func @f(%x: tensor<2x3xf32>) {
  %r = collage.argmax %x {axis = 1 : i64, keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  func.return
}

// -----

// instance_norm scale per channel
// CHECK:      %r = "collage.instance_norm"(%x, %s, %s)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: scale shape [2] must be [4]
func.func @f(%x: tensor<1x4x8xf32>, %s: tensor<2xf32>) {
  %r = collage.instance_norm %x, %s, %s {epsilon = 1.000000e-05 : f32} : (tensor<1x4x8xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x4x8xf32>
  func.return
}

// -----

// group_norm groups must divide the channels
// CHECK:      %r = "collage.group_norm"(%x, %s, %s)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: num_groups 3 must divide the 4 channels
func.func @f(%x: tensor<1x4x8xf32>, %s: tensor<4xf32>) {
  %r = collage.group_norm %x, %s, %s {num_groups = 3 : i64, epsilon = 1.000000e-05 : f32} : (tensor<1x4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8xf32>
  func.return
}

// -----

// softmax axis out of range
// CHECK:      %r = "collage.softmax"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x8xf32>) {
  %r = collage.softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  func.return
}

// -----

// lrn size must be positive
// CHECK:      %r = "collage.lrn"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: size must be positive
func.func @f(%x: tensor<1x4x8x8xf32>) {
  %r = collage.lrn %x {size = 0 : i64, alpha = 1.000000e-04 : f32, beta = 7.500000e-01 : f32, bias = 1.000000e+00 : f32} : tensor<1x4x8x8xf32>
  func.return
}

// -----

// constant value type differs from the result type
// CHECK:      %r = "collage.constant"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: value type tensor<2xf32> does not match result type tensor<3xf32>
func.func @f() {
  %r = "collage.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<3xf32>
  func.return
}

// -----

// kernel yields the wrong type
// CHECK:      %r = "collage.kernel"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: yielded types (tensor<4xi64>) do not match the result types (tensor<4xf32>)
func.func @f(%x: tensor<4xf32>) {
  %r = collage.kernel "tvm"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = collage.constant dense<1> : tensor<4xi64>
    collage.yield %c : tensor<4xi64>
  }
  func.return
}

// -----

// kernel block arguments differ from its inputs
// CHECK:      %r = "collage.kernel"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: block argument types (tensor<2xf32>) do not match the input types (tensor<4xf32>)
func.func @f(%x: tensor<4xf32>) {
  %r = collage.kernel "tvm"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<2xf32>):
    %c = collage.constant dense<1.0> : tensor<4xf32>
    collage.yield %c : tensor<4xf32>
  }
  func.return
}

// -----

// kernel uses a value from above
// CHECK:      %r = "collage.kernel"()
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: Operation using value defined out of its IsolatedFromAbove parent: ReluOp(%c = collage.relu %x : tensor<4xf32>)
func.func @f(%x: tensor<4xf32>) {
  %r = collage.kernel "tvm"() : () -> tensor<4xf32> {
    %c = collage.relu %x : tensor<4xf32>
    collage.yield %c : tensor<4xf32>
  }
  func.return
}

// -----

// yield outside a kernel
// CHECK:      "collage.yield"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'collage.yield' expects parent op to be one of 'collage.kernel', 'collage.composite'
func.func @f(%x: tensor<4xf32>) {
  collage.yield %x : tensor<4xf32>
}

// -----

// tile with repeats of the wrong rank
// CHECK:      %r = "collage.tile"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: repeats must be 2 non-negative values, got [2]
func.func @f(%x: tensor<3x5xf32>) {
  %r = collage.tile %x {repeats = array<i64: 2>} : tensor<3x5xf32> -> tensor<6x5xf32>
  func.return
}

// -----

// resize result shape against the scales
// CHECK:      %r = "collage.resize"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: scales [2.0, 2.0] make [1, 4, 5, 5] [1, 4, 10, 10], not [1, 4, 10, 9]
func.func @f(%x: tensor<1x4x5x5xf32>) {
  %r = collage.resize %x {mode = "nearest", coordinate_transformation_mode = "asymmetric", scales = array<f32: 2.0, 2.0>} : tensor<1x4x5x5xf32> -> tensor<1x4x10x9xf32>
  func.return
}

// -----

// resize with an unknown coordinate transformation mode
// CHECK:      %r = "collage.resize"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: 'tf_crop_and_resize' is not one of half_pixel, asymmetric, align_corners, pytorch_half_pixel
func.func @f(%x: tensor<1x4x5x5xf32>) {
  %r = collage.resize %x {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize"} : tensor<1x4x5x5xf32> -> tensor<1x4x10x10xf32>
  func.return
}

// -----

// resize changes only H and W
// CHECK:      %r = "collage.resize"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: resizes H and W of a 4-D tensor, not [1, 4, 5, 5] to [1, 8, 10, 10]
func.func @f(%x: tensor<1x4x5x5xf32>) {
  %r = collage.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel"} : tensor<1x4x5x5xf32> -> tensor<1x8x10x10xf32>
  func.return
}

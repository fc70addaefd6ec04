// collage-composite-patterns: each match of a named op chain becomes a collage.composite
// region, a primitive function (seed 004), before partitioning.
// RUN: collage-opt %s --split-input-file -p 'collage-composite-patterns{patterns="fma=mul+add;conv_relu=conv2d+relu"}' | filecheck %s

// Seed 004's example: a multiply feeding an add becomes one fused "fma" primitive.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %gv0 = collage.composite "fma"(%x, %y) {collage.primitive} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<3x4xf32>, %y_1: tensor<3x4xf32>):
// CHECK-NEXT:      %lv0 = collage.mul %x_1, %y_1
// CHECK-NEXT:      %gv0_1 = collage.add %lv0, %y_1
// CHECK-NEXT:      collage.yield %gv0_1 : tensor<3x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %gv0
func.func @main(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %lv0 = collage.mul %x, %y : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %gv0 = collage.add %lv0, %y : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %gv0 : tensor<3x4xf32>
}

// -----

// Two matches, one per pattern, at any operand position; a constant an op reads is
// cloned into its composite (and the outside one, now unread, erased).
// CHECK-LABEL: func.func @two
// CHECK-NEXT:    %r = collage.composite "conv_relu"(%x) {collage.primitive} : (tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<1x1x2x2xf32>):
// CHECK-NEXT:      %w = collage.constant
// CHECK-NEXT:      %c = collage.conv2d %x_1, %w
// CHECK-NEXT:      %r_1 = collage.relu %c
// CHECK-NEXT:      collage.yield %r_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %a = collage.composite "fma"(%r, %z)
// CHECK:           %m = collage.mul %r_1, %r_1
// CHECK-NEXT:      %a_1 = collage.add %z_1, %m
// CHECK:         func.return %a
func.func @two(%x: tensor<1x1x2x2xf32>, %z: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = collage.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = collage.relu %c : tensor<1x2x2x2xf32>
  %m = collage.mul %r, %r : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %a = collage.add %z, %m : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %a : tensor<1x2x2x2xf32>
}

// -----

// Not wrapped: a mul whose value is also used elsewhere (a primitive has one exit), and
// the second of two overlapping matches (the first, in dataflow order, is taken).
// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    %m = collage.mul %x, %x
// CHECK-NEXT:    %a = collage.add %m, %x
// CHECK-NEXT:    %p = collage.mul %x, %x
// CHECK-NEXT:    %b = collage.composite "fma"(%a, %m, %p)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %n = collage.mul
// CHECK-NEXT:      %b_1 = collage.add
// CHECK-NEXT:      collage.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %b
func.func @kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = collage.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = collage.add %m, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n = collage.mul %a, %m : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %p = collage.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = collage.add %n, %p : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// Composites formed before partitioning are nodes of the dataflow graph: a backend runs one
// iff it runs every op inside, a kernel holds it whole and is named after its label.
// RUN: collage-opt %s --split-input-file -p 'collage-composite-patterns{patterns="fma=mul+add;conv_relu=conv2d+relu"},collage-partition{backends=tvm,test backend-options="test: ops=mul,add,relu" mock-costs="tvm:2,test:1"}' | filecheck %s

// Seed 004's fma on the cheaper test backend: one kernel named "fma", the composite whole
// inside it.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %gv0 = collage.kernel "test"(%x, %y) {label = "fma", cost = 1.000000e+00 : f64}
// CHECK-NEXT:    ^bb0(%x_1: tensor<3x4xf32>, %y_1: tensor<3x4xf32>):
// CHECK-NEXT:      %gv0_1 = collage.composite "fma"(%x_1, %y_1)
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        %lv0 = collage.mul
// CHECK-NEXT:        %gv0_2 = collage.add %lv0
// CHECK-NEXT:        collage.yield %gv0_2
// CHECK-NEXT:      }
// CHECK-NEXT:      collage.yield %gv0_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %gv0
func.func @main(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %lv0 = collage.mul %x, %y : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %gv0 = collage.add %lv0, %y : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return %gv0 : tensor<3x4xf32>
}

// -----

// The composite fuses with the relu after it like any node: the kernel is "fma_relu".
// CHECK-LABEL: func.func @fused
// CHECK-NEXT:    %r = collage.kernel "test"(%x, %y) {label = "fma_relu"
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %a = collage.composite "fma"
// CHECK:           %r_1 = collage.relu %a
// CHECK-NEXT:      collage.yield %r_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @fused(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %m = collage.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = collage.add %m, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = collage.relu %a : tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

// The test backend runs relu but not conv2d, so not the conv_relu composite: tvm runs it,
// whole, though the test backend is cheaper.
// CHECK-LABEL: func.func @unsupported
// CHECK-NEXT:    %r = collage.kernel "tvm"(%x) {label = "conv_relu"
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %r_1 = collage.composite "conv_relu"
// CHECK:           collage.yield %r_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @unsupported(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = collage.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %r = collage.relu %c : tensor<1x2x2x2xf32>
  func.return %r : tensor<1x2x2x2xf32>
}

// collage-fuse-ops with max-fused-ops=2: at most two ops per group, so the relu no
// longer fits with conv2d and add (without the limit the three fuse: fuse_ops.mlir).
// RUN: collage-opt %s -p 'collage-fuse-ops{max-fused-ops=2}' | filecheck %s

// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %b = collage.kernel "tvm"(%x, %w, %bias) {label = "conv2d_add"}
// CHECK:         %r = collage.kernel "tvm"(%b) {label = "relu"}
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<1x4x1x1xf32>) -> tensor<1x4x3x3xf32> {
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %b = collage.add %c, %bias : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = collage.relu %b : tensor<1x4x6x6xf32>
  %p = collage.max_pool2d %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x6x6xf32> -> tensor<1x4x3x3xf32>
  %s = collage.sigmoid %p : tensor<1x4x3x3xf32>
  %t = collage.transpose %s {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xf32>
  func.return %t : tensor<1x4x3x3xf32>
}

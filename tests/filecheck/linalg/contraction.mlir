// Convolutions and matmul (linalg/contraction.py): padding is a tensor.pad, a group-1 conv is
// linalg.conv_2d_nchw_fchw, a grouped (here depthwise) conv expands to linalg.conv_2d_ngchw_gfchw,
// a 2-D matmul is linalg.matmul, a batched one a generic with a reduction, and conv_transpose2d
// dilates its input with insert_slice and convolves with the flipped kernel.
// The output, printed in generic form, parses and verifies with iree-opt.
// RUN: collage-opt %s -p collage-lower-linalg | filecheck %s
// RUN: collage-opt %s -p collage-lower-linalg --print-op-generic | iree-opt --verify-each -o /dev/null

// CHECK:      tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:      %conv = linalg.conv_2d_nchw_fchw {strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%{{.*}}, %w : tensor<1x4x10x10xf32>, tensor<6x4x3x3xf32>)
// CHECK:      tensor.expand_shape %dw {{.*}} into tensor<4x1x1x3x3xf32>
// CHECK:      linalg.conv_2d_ngchw_gfchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>}
// CHECK:      %dconv = tensor.collapse_shape {{.*}} : tensor<1x4x1x8x8xf32> into tensor<1x4x8x8xf32>
// CHECK:      %mm = linalg.matmul ins(%m, %n : tensor<2x3xf32>, tensor<3x5xf32>)
// CHECK:      %bmm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK:      tensor.insert_slice %conv into %{{.*}}[0, 0, 2, 2] [1, 6, 4, 4] [1, 1, 2, 2]
// CHECK:      %up = linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x4x8x8xf32>
// CHECK:      func.return %conv, %dconv, %mm, %bmm, %up
// CHECK-NOT:  collage.
func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>, %dw: tensor<4x1x3x3xf32>, %m: tensor<2x3xf32>, %n: tensor<3x5xf32>, %bm: tensor<2x2x3xf32>) -> (tensor<1x6x4x4xf32>, tensor<1x4x8x8xf32>, tensor<2x5xf32>, tensor<2x2x5xf32>, tensor<1x4x8x8xf32>) {
  %conv = collage.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x4x4xf32>
  %dconv = collage.conv2d %x, %dw {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
  %mm = collage.matmul %m, %n : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  %bmm = collage.matmul %bm, %n : (tensor<2x2x3xf32>, tensor<3x5xf32>) -> tensor<2x2x5xf32>
  %up = collage.conv_transpose2d %conv, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x6x4x4xf32>, tensor<6x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %conv, %dconv, %mm, %bmm, %up : tensor<1x6x4x4xf32>, tensor<1x4x8x8xf32>, tensor<2x5xf32>, tensor<2x2x5xf32>, tensor<1x4x8x8xf32>
}

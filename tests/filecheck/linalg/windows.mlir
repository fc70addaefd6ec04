// Pooling, padding and LRN (linalg/windows.py): a pool is a generic over the padded input and a
// window-shaped tensor.empty (reduction iterators); average pooling divides by the counts, global
// pooling reduces the spatial dims; pad is tensor.pad.
// The output, printed in generic form, parses and verifies with iree-opt.
// RUN: collage-opt %s -p collage-lower-linalg | filecheck %s
// RUN: collage-opt %s -p collage-lower-linalg --print-op-generic | iree-opt --verify-each -o /dev/null

// CHECK:      %max = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d4), ((d3 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x4x10x10xf32>, tensor<3x3xf32>)
// CHECK:        arith.maximumf
// CHECK:      tensor.pad %x low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK:      %avg = linalg.generic
// CHECK:        arith.divf
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x4x8x8xf32>)
// CHECK:      %gap = linalg.generic
// CHECK:        arith.divf
// CHECK:      %pad = tensor.pad %x low[0, 0, 1, 2] high[0, 0, 1, 1]
// CHECK:      %lrn = linalg.generic
// CHECK:        math.powf
// CHECK:      func.return %max, %avg, %gap, %pad, %lrn
// CHECK-NOT:  collage.
func.func @main(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>, tensor<1x4x10x11xf32>, tensor<1x4x8x8xf32>) {
  %max = collage.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, ceil_mode = false} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %avg = collage.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true, count_include_pad = false} : tensor<1x4x8x8xf32> -> tensor<1x4x4x4xf32>
  %gap = collage.global_avg_pool2d %x : tensor<1x4x8x8xf32> -> tensor<1x4x1x1xf32>
  %pad = collage.pad %x {pads = array<i64: 0, 0, 1, 2, 0, 0, 1, 1>, value = 0.000000e+00 : f32} : tensor<1x4x8x8xf32> -> tensor<1x4x10x11xf32>
  %lrn = collage.lrn %x {size = 3 : i64, alpha = 0.001 : f32, beta = 0.75 : f32, bias = 2.0 : f32} : tensor<1x4x8x8xf32>
  func.return %max, %avg, %gap, %pad, %lrn : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x1x1xf32>, tensor<1x4x10x11xf32>, tensor<1x4x8x8xf32>
}

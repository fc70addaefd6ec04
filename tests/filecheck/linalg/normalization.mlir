// Softmax, normalizations and reductions (linalg/normalization.py) are generics: a reduction into
// a filled accumulator, then a parallel generic that reads it back through a projected map;
// group_norm reshapes to (N, G, C/G, H, W) and back; argmax takes the smallest index where the
// input equals the max.
// The output, printed in generic form, parses and verifies with iree-opt.
// RUN: collage-opt %s -p collage-lower-linalg | filecheck %s
// RUN: collage-opt %s -p collage-lower-linalg --print-op-generic | iree-opt --verify-each -o /dev/null

// CHECK:      arith.constant 0xff800000 : f32
// CHECK:      linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x8xf32>)
// CHECK:        arith.maximumf
// CHECK:        math.exp
// CHECK:      %sm = linalg.generic
// CHECK:        math.exp
// CHECK:        arith.divf
// CHECK:      %ln = linalg.generic
// CHECK:        math.sqrt
// CHECK:      %bn = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK:      tensor.expand_shape {{.*}} into tensor<2x2x2x3x3xf32>
// CHECK:      %gn = tensor.expand_shape {{.*}} : tensor<72xf32> into tensor<2x4x3x3xf32>
// CHECK:      %mean = linalg.generic
// CHECK:      %am = linalg.generic {{.*}} ins(%x, %{{.*}} : tensor<2x4x8xf32>, tensor<2x1x8xf32>) outs(%{{.*}} : tensor<2x1x8xi64>)
// CHECK:        arith.cmpf oeq
// CHECK:        linalg.index 1 : index
// CHECK:        arith.minsi
// CHECK:      func.return %sm, %ln, %bn, %gn, %mean, %am
// CHECK-NOT:  collage.
func.func @main(%x: tensor<2x4x8xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %img: tensor<2x4x3x3xf32>, %c: tensor<4xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<2x4x1xf32>, tensor<2x1x8xi64>) {
  %sm = collage.softmax %x {axis = -1 : i64} : tensor<2x4x8xf32>
  %ln = collage.layer_norm %x, %s, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  %bn = collage.batch_norm %img, %c, %c, %c, %c {epsilon = 1.000000e-05 : f32} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  %gn = collage.group_norm %img, %c, %c {num_groups = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  %mean = collage.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %am = collage.argmax %x {axis = 1 : i64, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x1x8xi64>
  func.return %sm, %ln, %bn, %gn, %mean, %am : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<2x4x1xf32>, tensor<2x1x8xi64>
}

// Data movement (linalg/shapes.py): reshape is collapse_shape + expand_shape, transpose is
// linalg.transpose, concat tensor.concat, split and slice extract_slice (steps as strides), gather
// and expand generics that index their source, tile a generic with mod maps, and a constant an
// arith.constant.
// The output, printed in generic form, parses and verifies with iree-opt.
// RUN: collage-opt %s -p collage-lower-linalg | filecheck %s
// RUN: collage-opt %s -p collage-lower-linalg --print-op-generic | iree-opt --verify-each -o /dev/null

// CHECK:      tensor.collapse_shape %m {{.*}} : tensor<2x3xf32> into tensor<6xf32>
// CHECK-NEXT: %re = tensor.expand_shape {{.*}} output_shape [3, 2] : tensor<6xf32> into tensor<3x2xf32>
// CHECK:      %tr = linalg.transpose ins(%m:tensor<2x3xf32>) outs(%{{.*}}:tensor<3x2xf32>) permutation = [1, 0]
// CHECK-NEXT: %cat = tensor.concat dim(0) %m, %m : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %lo = tensor.extract_slice %n[0, 0] [3, 2] [1, 1] : tensor<3x5xf32> to tensor<3x2xf32>
// CHECK-NEXT: %hi = tensor.extract_slice %n[0, 2] [3, 3] [1, 1] : tensor<3x5xf32> to tensor<3x3xf32>
// CHECK-NEXT: %sl = tensor.extract_slice %n[0, 1] [3, 2] [1, 2] : tensor<3x5xf32> to tensor<3x2xf32>
// CHECK:      %ga = linalg.generic {{.*}} ins(%idx : tensor<2xi64>) outs(%{{.*}} : tensor<2x5xf32>)
// CHECK:        tensor.extract %n[%{{.*}}, %{{.*}}] : tensor<3x5xf32>
// CHECK:      %ex = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK:      %ti = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ((d0 mod 2), d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:      %k = arith.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>
// CHECK:      func.return %re, %tr, %cat, %lo, %hi, %sl, %ga, %ex, %ti, %k
// CHECK-NOT:  collage.
func.func @main(%m: tensor<2x3xf32>, %n: tensor<3x5xf32>, %idx: tensor<2xi64>, %col: tensor<3x1xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<4x3xf32>, tensor<3x2xf32>, tensor<3x3xf32>, tensor<3x2xf32>, tensor<2x5xf32>, tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<2x3xf32>) {
  %re = collage.reshape %m : tensor<2x3xf32> -> tensor<3x2xf32>
  %tr = collage.transpose %m {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %cat = collage.concat %m, %m {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %lo, %hi = collage.split %n {axis = 1 : i64, sizes = array<i64: 2, 3>} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x3xf32>)
  %sl = collage.slice %n {starts = array<i64: 1>, ends = array<i64: 100>, axes = array<i64: 1>, steps = array<i64: 2>} : tensor<3x5xf32> -> tensor<3x2xf32>
  %ga = collage.gather %n, %idx {axis = 0 : i64} : (tensor<3x5xf32>, tensor<2xi64>) -> tensor<2x5xf32>
  %ex = collage.expand %col : tensor<3x1xf32> -> tensor<2x3x4xf32>
  %ti = collage.tile %m {repeats = array<i64: 2, 1>} : tensor<2x3xf32> -> tensor<4x3xf32>
  %k = collage.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  func.return %re, %tr, %cat, %lo, %hi, %sl, %ga, %ex, %ti, %k : tensor<3x2xf32>, tensor<3x2xf32>, tensor<4x3xf32>, tensor<3x2xf32>, tensor<3x3xf32>, tensor<3x2xf32>, tensor<2x5xf32>, tensor<2x3x4xf32>, tensor<4x3xf32>, tensor<2x3xf32>
}

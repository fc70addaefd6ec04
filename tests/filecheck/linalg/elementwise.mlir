// Element-wise ops (linalg/elementwise.py) become one parallel linalg.generic each, with broadcast
// operands read through projected maps; comparisons yield i1, where selects, cast converts.
// The output, printed in generic form, parses and verifies with iree-opt.
// RUN: collage-opt %s -p collage-lower-linalg | filecheck %s
// RUN: collage-opt %s -p collage-lower-linalg --print-op-generic | iree-opt --verify-each -o /dev/null

// CHECK:      %relu = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<2x3xf32>)
// CHECK:        arith.maximumf
// CHECK:      %erf = linalg.generic
// CHECK:        math.erf
// CHECK:      %hs = linalg.generic
// CHECK:        arith.mulf
// CHECK:        arith.addf
// CHECK:        arith.maximumf
// CHECK:        arith.minimumf
// CHECK:      %add = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:        arith.addf
// CHECK:      %lt = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xi1>)
// CHECK:        arith.cmpf olt
// CHECK:      %sel = linalg.generic {{.*}} ins(%b, %m, %v : tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>)
// CHECK:        arith.select
// CHECK:      %cast = linalg.generic
// CHECK:        arith.sitofp {{.*}} : i64 to f32
// CHECK:      %clip = linalg.generic
// CHECK:      func.return %relu, %erf, %hs, %add, %lt, %sel, %cast, %clip
// CHECK-NOT:  collage.
func.func @main(%m: tensor<2x3xf32>, %v: tensor<3xf32>, %b: tensor<2x3xi1>, %i: tensor<2x3xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %relu = collage.relu %m : tensor<2x3xf32>
  %erf = collage.erf %m : tensor<2x3xf32>
  %hs = collage.hard_sigmoid %m {alpha = 2.000000e-01 : f32, beta = 5.000000e-01 : f32} : tensor<2x3xf32>
  %add = collage.add %m, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %lt = collage.less %m, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %sel = collage.where %b, %m, %v : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %cast = collage.cast %i : tensor<2x3xi64> -> tensor<2x3xf32>
  %clip = collage.clip %m {min = 0.000000e+00 : f32, max = 6.000000e+00 : f32} : tensor<2x3xf32>
  func.return %relu, %erf, %hs, %add, %lt, %sel, %cast, %clip : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

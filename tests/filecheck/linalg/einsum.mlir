// collage.einsum (linalg/contraction.py): one linalg.generic, a loop per letter (the output's
// parallel, the summed ones reductions), each operand read through its term's map, the
// product added to a zero-filled accumulator; a transpose is a generic without reduction.
// The output, printed in generic form, parses and verifies with iree-opt.
// RUN: collage-opt %s -p collage-lower-linalg | filecheck %s
// RUN: collage-opt %s -p collage-lower-linalg --print-op-generic | iree-opt --verify-each -o /dev/null

// CHECK:      linalg.fill
// CHECK-NEXT: %s = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:   %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK-NEXT:   linalg.yield %[[S]] : f32
// CHECK:      %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<3x4xf32>)
// CHECK:      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<3x4xf32>)
// CHECK:      func.return %s, %t, %r
// CHECK-NOT:  collage.
func.func @main(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x5x4xf32>, %m: tensor<3x4xf32>) -> (tensor<1x2x3x5xf32>, tensor<4x3xf32>, tensor<3xf32>) {
  %s = collage.einsum %q, %k {equation = "bhid,bhjd->bhij"} : (tensor<1x2x3x4xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x3x5xf32>
  %t = collage.einsum %m {equation = "ij->ji"} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %r = collage.einsum %m {equation = "ij->i"} : (tensor<3x4xf32>) -> tensor<3xf32>
  func.return %s, %t, %r : tensor<1x2x3x5xf32>, tensor<4x3xf32>, tensor<3xf32>
}

// RUN: collage-opt %s | collage-opt | filecheck %s
// RUN: collage-opt %s --print-op-generic | collage-opt | filecheck %s

// collage.einsum in its custom form survives printing and re-parsing, in custom and generic
// form: attention's two contractions, a batched and a plain matmul, a row-wise dot product,
// a transpose, a sum, a trace (to a 0-d tensor) and three operands.

// CHECK:      func.func @main(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %m: tensor<3x4xf32>, %n: tensor<4x5xf32>, %sq: tensor<3x3xf32>)
// CHECK-NEXT:   %s = collage.einsum %q, %k {equation = "bhid,bhjd->bhij"} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>
// CHECK-NEXT:   %o = collage.einsum %s, %v {equation = "bhij,bhjd->bhid"} : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT:   %bmm = collage.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT:   %mm = collage.einsum %m, %n {equation = "ij,jk->ik"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT:   %dot = collage.einsum %m, %m {equation = "bi,bi->b"} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT:   %t = collage.einsum %m {equation = "ij->ji"} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:   %sum = collage.einsum %m {equation = "ij->i"} : (tensor<3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT:   %tr = collage.einsum %sq {equation = "ii->"} : (tensor<3x3xf32>) -> tensor<f32>
// CHECK-NEXT:   %chain = collage.einsum %sq, %m, %n {equation = "ij,jk,kl->il"} : (tensor<3x3xf32>, tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
func.func @main(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %m: tensor<3x4xf32>, %n: tensor<4x5xf32>, %sq: tensor<3x3xf32>) {
  %s = collage.einsum %q, %k {equation = "bhid,bhjd->bhij"} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x6xf32>
  %o = collage.einsum %s, %v {equation = "bhij,bhjd->bhid"} : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  %bmm = collage.einsum %a, %b {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %mm = collage.einsum %m, %n {equation = "ij,jk->ik"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %dot = collage.einsum %m, %m {equation = "bi,bi->b"} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3xf32>
  %t = collage.einsum %m {equation = "ij->ji"} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %sum = collage.einsum %m {equation = "ij->i"} : (tensor<3x4xf32>) -> tensor<3xf32>
  %tr = collage.einsum %sq {equation = "ii->"} : (tensor<3x3xf32>) -> tensor<f32>
  %chain = collage.einsum %sq, %m, %n {equation = "ij,jk,kl->il"} : (tensor<3x3xf32>, tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return
}

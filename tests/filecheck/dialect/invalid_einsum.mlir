// RUN: collage-opt %s --split-input-file --verify-diagnostics | filecheck %s

// collage.einsum rejects a bad equation, operand count, rank, size or result type with a
// diagnostic on the op.

// einsum operand count against the equation
// CHECK:      %r = "collage.einsum"(%m)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: equation 'ij,jk->ik' has 2 inputs, got 1 operands
func.func @f(%m: tensor<3x4xf32>) {
  %r = collage.einsum %m {equation = "ij,jk->ik"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// einsum operand rank against its term
// CHECK:      %r = "collage.einsum"(%m, %n)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: operand 1 has rank 2, term 'bjk' needs 3
func.func @f(%m: tensor<2x3x4xf32>, %n: tensor<4x5xf32>) {
  %r = collage.einsum %m, %n {equation = "bij,bjk->bik"} : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  func.return
}

// -----

// einsum letter with two sizes
// CHECK:      %r = "collage.einsum"(%m, %n)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: letter 'j' is 4 and 5 (operand 1)
func.func @f(%m: tensor<3x4xf32>, %n: tensor<5x6xf32>) {
  %r = collage.einsum %m, %n {equation = "ij,jk->ik"} : (tensor<3x4xf32>, tensor<5x6xf32>) -> tensor<3x6xf32>
  func.return
}

// -----

// einsum result shape
// CHECK:      %r = "collage.einsum"(%m, %n)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result types tensor<5x3xf32> do not match the inferred tensor<3x5xf32>
func.func @f(%m: tensor<3x4xf32>, %n: tensor<4x5xf32>) {
  %r = collage.einsum %m, %n {equation = "ij,jk->ik"} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<5x3xf32>
  func.return
}

// -----

// einsum with an ellipsis
// CHECK:      %r = "collage.einsum"(%m)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: equation '...ij->...ji': an ellipsis is not supported
func.func @f(%m: tensor<2x3x4xf32>) {
  %r = collage.einsum %m {equation = "...ij->...ji"} : (tensor<2x3x4xf32>) -> tensor<2x4x3xf32>
  func.return
}

// -----

// einsum without an explicit output
// CHECK:      %r = "collage.einsum"(%m)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: equation 'ij' needs an explicit output ('->')
func.func @f(%m: tensor<3x4xf32>) {
  %r = collage.einsum %m {equation = "ij"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// einsum output letter in no input
// CHECK:      %r = "collage.einsum"(%m)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: equation 'ij->ik': output letter 'k' is in no input
func.func @f(%m: tensor<3x4xf32>) {
  %r = collage.einsum %m {equation = "ij->ik"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  func.return
}

// -----

// einsum output letter twice
// CHECK:      %r = "collage.einsum"(%m)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: equation 'ij->ii': an output letter repeats
func.func @f(%m: tensor<3x3xf32>) {
  %r = collage.einsum %m {equation = "ij->ii"} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  func.return
}

// -----

// einsum term of something else than letters
// CHECK:      %r = "collage.einsum"(%m)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: equation 'i1->i': term 'i1' is not letters
func.func @f(%m: tensor<3x3xf32>) {
  %r = collage.einsum %m {equation = "i1->i"} : (tensor<3x3xf32>) -> tensor<3xf32>
  func.return
}

// -----

// einsum operands of two element types
// CHECK:      %r = "collage.einsum"(%m, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: operands must have one element type, got f32, i64
func.func @f(%m: tensor<3x4xf32>, %i: tensor<4x5xi64>) {
  %r = collage.einsum %m, %i {equation = "ij,jk->ik"} : (tensor<3x4xf32>, tensor<4x5xi64>) -> tensor<3x5xf32>
  func.return
}

// RUN: collage-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The indexing ops reject bad indices, shapes and attributes with a diagnostic on the op.

// gather_elements indices wider than the data off the axis
// CHECK:      %r = "collage.gather_elements"(%x, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: indices [3, 2, 6] must have the rank of data [3, 4, 5] and fit in it off axis 1
func.func @f(%x: tensor<3x4x5xf32>, %i: tensor<3x2x6xi64>) {
  %r = collage.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x6xi64>) -> tensor<3x2x6xf32>
  func.return
}

// -----

// gather_elements indices of floats
// CHECK:      %r = "collage.gather_elements"(%x, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: indices must be i32 or i64, got f32
func.func @f(%x: tensor<3x4xf32>, %i: tensor<3x2xf32>) {
  %r = collage.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return
}

// -----

// gather_nd index tuples longer than the data's rank
// CHECK:      %r = "collage.gather_nd"(%x, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: index tuples of length 3 do not address data [3, 4]
func.func @f(%x: tensor<3x4xf32>, %i: tensor<2x3xi64>) {
  %r = collage.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<3x4xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  func.return
}

// -----

// gather_nd batch dimensions that differ
// CHECK:      %r = "collage.gather_nd"(%x, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: the 1 batch dimensions of data [3, 4, 5] and indices [2, 1] differ
func.func @f(%x: tensor<3x4x5xf32>, %i: tensor<2x1xi64>) {
  %r = collage.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<3x4x5xf32>, tensor<2x1xi64>) -> tensor<2x5xf32>
  func.return
}

// -----

// gather_nd result shape
// CHECK:      %r = "collage.gather_nd"(%x, %i)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result types tensor<2xf32> do not match the inferred tensor<2x5xf32>
func.func @f(%x: tensor<3x4x5xf32>, %i: tensor<2x2xi64>) {
  %r = collage.gather_nd %x, %i {batch_dims = 0 : i64} : (tensor<3x4x5xf32>, tensor<2x2xi64>) -> tensor<2xf32>
  func.return
}

// -----

// scatter_nd updates of the wrong shape
// CHECK:      %r = "collage.scatter_nd"(%x, %i, %u)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: updates shape [2, 4] must be [2, 5]
func.func @f(%x: tensor<4x5xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  %r = collage.scatter_nd %x, %i, %u : (tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x5xf32>
  func.return
}

// -----

// scatter_nd with an unknown reduction
// CHECK:      %r = "collage.scatter_nd"(%x, %i, %u)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: reduction 'sub' is not one of none, add, mul, min, max
func.func @f(%x: tensor<4x5xf32>, %i: tensor<2x1xi64>, %u: tensor<2x5xf32>) {
  %r = collage.scatter_nd %x, %i, %u {reduction = "sub"} : (tensor<4x5xf32>, tensor<2x1xi64>, tensor<2x5xf32>) -> tensor<4x5xf32>
  func.return
}

// -----

// scatter_nd with i32 indices (ONNX ScatterND takes i64)
// CHECK:      %r = "collage.scatter_nd"(%x, %i, %u)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: indices must be i64, got i32
func.func @f(%x: tensor<4x5xf32>, %i: tensor<2x1xi32>, %u: tensor<2x5xf32>) {
  %r = collage.scatter_nd %x, %i, %u : (tensor<4x5xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<4x5xf32>
  func.return
}

// -----

// top_k with k above the axis' size
// CHECK:      %v, %i = "collage.top_k"(%x)
// CHECK-NEXT: ^^^^^^^^
// CHECK-NEXT: | Operation does not verify: k 6 must be in [1, 5], the size of axis -1
func.func @f(%x: tensor<3x5xf32>) {
  %v, %i = collage.top_k %x {k = 6 : i64, axis = -1 : i64, largest = true} : tensor<3x5xf32> -> tensor<3x6xf32>, tensor<3x6xi64>
  func.return
}

// -----

// top_k indices must be i64
// CHECK:      %v, %i = "collage.top_k"(%x)
// CHECK-NEXT: ^^^^^^^^
// CHECK-NEXT: | Operation does not verify: result types tensor<3x2xf32>, tensor<3x2xi32> do not match the inferred tensor<3x2xf32>, tensor<3x2xi64>
func.func @f(%x: tensor<3x5xf32>) {
  %v, %i = collage.top_k %x {k = 2 : i64, axis = 1 : i64, largest = false} : tensor<3x5xf32> -> tensor<3x2xf32>, tensor<3x2xi32>
  func.return
}

// -----

// cumsum axis out of range
// CHECK:      %r = "collage.cumsum"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: axis 2 is out of range for rank 2
func.func @f(%x: tensor<3x5xf32>) {
  %r = collage.cumsum %x {axis = 2 : i64} : tensor<3x5xf32>
  func.return
}

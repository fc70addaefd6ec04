// RUN: collage-opt %s | collage-opt | filecheck %s
// RUN: collage-opt %s --print-op-generic | collage-opt | filecheck %s

// The indexing ops in their custom form survive printing and re-parsing, in custom and
// generic form: gather_elements (i64 and i32 indices), gather_nd (whole tuples, slices,
// batched), scatter_nd (no reduction, add), top_k's two results, cumsum (the flags given
// or left out).

// CHECK:      func.func @main(%x: tensor<3x4x5xf32>, %i: tensor<3x2x5xi64>, %j: tensor<2x4x5xi32>, %t: tensor<2x3xi64>, %b: tensor<3x2x1xi64>, %u: tensor<2x4x5xf32>)
// CHECK-NEXT:   %ge = collage.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x5xi64>) -> tensor<3x2x5xf32>
// CHECK-NEXT:   %ge32 = collage.gather_elements %x, %j {axis = -3 : i64} : (tensor<3x4x5xf32>, tensor<2x4x5xi32>) -> tensor<2x4x5xf32>
// CHECK-NEXT:   %gn = collage.gather_nd %x, %t {batch_dims = 0 : i64} : (tensor<3x4x5xf32>, tensor<2x3xi64>) -> tensor<2xf32>
// CHECK-NEXT:   %gs = collage.gather_nd %x, %b {batch_dims = 0 : i64} : (tensor<3x4x5xf32>, tensor<3x2x1xi64>) -> tensor<3x2x4x5xf32>
// CHECK-NEXT:   %gb = collage.gather_nd %x, %b {batch_dims = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x1xi64>) -> tensor<3x2x5xf32>
// CHECK-NEXT:   %r = collage.constant dense<{{\[}}[0], [-1]]> : tensor<2x1xi64>
// CHECK-NEXT:   %s = collage.scatter_nd %x, %r, %u : (tensor<3x4x5xf32>, tensor<2x1xi64>, tensor<2x4x5xf32>) -> tensor<3x4x5xf32>
// CHECK-NEXT:   %sa = collage.scatter_nd %x, %r, %u {reduction = "add"} : (tensor<3x4x5xf32>, tensor<2x1xi64>, tensor<2x4x5xf32>) -> tensor<3x4x5xf32>
// CHECK-NEXT:   %v, %vi = collage.top_k %x {k = 2 : i64, axis = -1 : i64, largest = true} : tensor<3x4x5xf32> -> tensor<3x4x2xf32>, tensor<3x4x2xi64>
// CHECK-NEXT:   %c = collage.cumsum %x {axis = 1 : i64, exclusive = true, reverse = false} : tensor<3x4x5xf32>
// CHECK-NEXT:   %c0 = collage.cumsum %x {axis = 0 : i64} : tensor<3x4x5xf32>
func.func @main(%x: tensor<3x4x5xf32>, %i: tensor<3x2x5xi64>, %j: tensor<2x4x5xi32>, %t: tensor<2x3xi64>, %b: tensor<3x2x1xi64>, %u: tensor<2x4x5xf32>) {
  %ge = collage.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x5xi64>) -> tensor<3x2x5xf32>
  %ge32 = collage.gather_elements %x, %j {axis = -3 : i64} : (tensor<3x4x5xf32>, tensor<2x4x5xi32>) -> tensor<2x4x5xf32>
  %gn = collage.gather_nd %x, %t {batch_dims = 0 : i64} : (tensor<3x4x5xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  %gs = collage.gather_nd %x, %b {batch_dims = 0 : i64} : (tensor<3x4x5xf32>, tensor<3x2x1xi64>) -> tensor<3x2x4x5xf32>
  %gb = collage.gather_nd %x, %b {batch_dims = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x1xi64>) -> tensor<3x2x5xf32>
  %r = collage.constant dense<[[0], [-1]]> : tensor<2x1xi64>
  %s = collage.scatter_nd %x, %r, %u : (tensor<3x4x5xf32>, tensor<2x1xi64>, tensor<2x4x5xf32>) -> tensor<3x4x5xf32>
  %sa = collage.scatter_nd %x, %r, %u {reduction = "add"} : (tensor<3x4x5xf32>, tensor<2x1xi64>, tensor<2x4x5xf32>) -> tensor<3x4x5xf32>
  %v, %vi = collage.top_k %x {k = 2 : i64, axis = -1 : i64, largest = true} : tensor<3x4x5xf32> -> tensor<3x4x2xf32>, tensor<3x4x2xi64>
  %c = collage.cumsum %x {axis = 1 : i64, exclusive = true, reverse = false} : tensor<3x4x5xf32>
  %c0 = collage.cumsum %x {axis = 0 : i64} : tensor<3x4x5xf32>
  func.return
}

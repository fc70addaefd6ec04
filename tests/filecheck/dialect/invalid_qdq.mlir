// RUN: collage-opt %s --split-input-file --verify-diagnostics | filecheck %s

// collage.quantize_linear and collage.dequantize_linear reject bad element types, scale and
// zero point shapes and axes with a diagnostic on the op.

// quantize_linear scale of another float type
// CHECK:      %r = "collage.quantize_linear"(%x, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: scale must be f32, got f16
func.func @f(%x: tensor<2x3xf32>, %s: tensor<f16>, %z: tensor<i8>) {
  %r = collage.quantize_linear %x, %s, %z : (tensor<2x3xf32>, tensor<f16>, tensor<i8>) -> tensor<2x3xi8>
  func.return
}

// -----

// quantize_linear zero point of a type other than i8 and ui8
// CHECK:      %r = "collage.quantize_linear"(%x, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: zero point must be i8 or ui8, got i32
func.func @f(%x: tensor<2x3xf32>, %s: tensor<f32>, %z: tensor<i32>) {
  %r = collage.quantize_linear %x, %s, %z : (tensor<2x3xf32>, tensor<f32>, tensor<i32>) -> tensor<2x3xi32>
  func.return
}

// -----

// quantize_linear zero point of another shape than the scale
// CHECK:      %r = "collage.quantize_linear"(%x, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: zero point shape [] must match scale shape [3]
func.func @f(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<i8>) {
  %r = collage.quantize_linear %x, %s, %z {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<i8>) -> tensor<2x3xi8>
  func.return
}

// -----

// quantize_linear blocked (2-D) scale
// CHECK:      %r = "collage.quantize_linear"(%x, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: scale must be a scalar or 1-D, got shape [2, 3]
func.func @f(%x: tensor<2x3xf32>, %s: tensor<2x3xf32>, %z: tensor<2x3xi8>) {
  %r = collage.quantize_linear %x, %s, %z {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi8>) -> tensor<2x3xi8>
  func.return
}

// -----

// quantize_linear per-channel scale without an axis
// CHECK:      %r = "collage.quantize_linear"(%x, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: a per-channel scale (shape [3]) needs an axis
func.func @f(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %z: tensor<3xi8>) {
  %r = collage.quantize_linear %x, %s, %z : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xi8>
  func.return
}

// -----

// dequantize_linear axis with a per-tensor scale
// CHECK:      %r = "collage.dequantize_linear"(%q, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: axis is only for a per-channel (1-D) scale, got a scalar
func.func @f(%q: tensor<2x3xi8>, %s: tensor<f32>, %z: tensor<i8>) {
  %r = collage.dequantize_linear %q, %s, %z {axis = 1 : i64} : (tensor<2x3xi8>, tensor<f32>, tensor<i8>) -> tensor<2x3xf32>
  func.return
}

// -----

// dequantize_linear per-channel scale of the wrong length
// CHECK:      %r = "collage.dequantize_linear"(%q, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: scale has 2 values for the 3 channels of axis 1
func.func @f(%q: tensor<2x3xi8>, %s: tensor<2xf32>, %z: tensor<2xi8>) {
  %r = collage.dequantize_linear %q, %s, %z {axis = 1 : i64} : (tensor<2x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x3xf32>
  func.return
}

// -----

// dequantize_linear axis out of range
// CHECK:      %r = "collage.dequantize_linear"(%q, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: axis 2 is out of range for rank 2
func.func @f(%q: tensor<2x3xi8>, %s: tensor<3xf32>, %z: tensor<3xi8>) {
  %r = collage.dequantize_linear %q, %s, %z {axis = 2 : i64} : (tensor<2x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xf32>
  func.return
}

// -----

// quantize_linear of a non-f32 input
// CHECK:      %r = "collage.quantize_linear"(%x, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: input must be f32, got f16
func.func @f(%x: tensor<2x3xf16>, %s: tensor<f32>, %z: tensor<i8>) {
  %r = collage.quantize_linear %x, %s, %z : (tensor<2x3xf16>, tensor<f32>, tensor<i8>) -> tensor<2x3xi8>
  func.return
}

// -----

// dequantize_linear input of another type than the zero point
// CHECK:      %r = "collage.dequantize_linear"(%q, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: input element type i8 must be the zero point's ui8
func.func @f(%q: tensor<2x3xi8>, %s: tensor<f32>, %z: tensor<ui8>) {
  %r = collage.dequantize_linear %q, %s, %z : (tensor<2x3xi8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  func.return
}

// -----

// quantize_linear result of another type than the zero point
// CHECK:      %r = "collage.quantize_linear"(%x, %s, %z)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: result types tensor<2x3xui8> do not match the inferred tensor<2x3xi8>
func.func @f(%x: tensor<2x3xf32>, %s: tensor<f32>, %z: tensor<i8>) {
  %r = collage.quantize_linear %x, %s, %z : (tensor<2x3xf32>, tensor<f32>, tensor<i8>) -> tensor<2x3xui8>
  func.return
}

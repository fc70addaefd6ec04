// RUN: collage-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The normalizations and binary ops reject operands of mixed float element types (an f16
// input with f32 parameters) with a diagnostic on the op.

// layer_norm f16 input, f32 scale and bias
// CHECK:      %r = "collage.layer_norm"(%x, %s, %s)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: operands must have one element type, got f16, f32
func.func @f(%x: tensor<2x8xf16>, %s: tensor<8xf32>) {
  %r = collage.layer_norm %x, %s, %s {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf16>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf16>
  func.return
}

// -----

// batch_norm f16 input, f32 statistics
// CHECK:      %r = "collage.batch_norm"(%x, %s, %s, %s, %s)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: operands must have one element type, got f16, f32
func.func @f(%x: tensor<1x3x2x2xf16>, %s: tensor<3xf32>) {
  %r = collage.batch_norm %x, %s, %s, %s, %s {epsilon = 1.0e-03 : f32} : (tensor<1x3x2x2xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf16>
  func.return
}

// -----

// instance_norm f16 input, f32 scale and bias
// CHECK:      %r = "collage.instance_norm"(%x, %s, %s)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: operands must have one element type, got f16, f32
func.func @f(%x: tensor<1x3x2x2xf16>, %s: tensor<3xf32>) {
  %r = collage.instance_norm %x, %s, %s {epsilon = 1.0e-05 : f32} : (tensor<1x3x2x2xf16>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf16>
  func.return
}

// -----

// add of f16 and f32
// CHECK:      %r = "collage.add"(%x, %y)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: operands must have one element type, got f16, f32
func.func @f(%x: tensor<4xf16>, %y: tensor<4xf32>) {
  %r = collage.add %x, %y : (tensor<4xf16>, tensor<4xf32>) -> tensor<4xf16>
  func.return
}

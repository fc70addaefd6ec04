// RUN: collage-opt %s | collage-opt | filecheck %s
// RUN: collage-opt %s --print-op-generic | collage-opt | filecheck %s

// collage.quantize_linear and collage.dequantize_linear in their custom form survive printing
// and re-parsing, in custom and generic form: per channel (i8, a negative axis) and per
// tensor (ui8), the scale and zero point as constants or as arguments.

// CHECK:      func.func @main(%x: tensor<1x3x4xf32>, %s: tensor<f32>, %z: tensor<ui8>)
// CHECK-NEXT:   %cs = collage.constant dense<[5.000000e-01, 2.500000e-01, 1.250000e-01]> : tensor<3xf32>
// CHECK-NEXT:   %cz = collage.constant dense<[0, 1, -2]> : tensor<3xi8>
// CHECK-NEXT:   %q = collage.quantize_linear %x, %cs, %cz {axis = 1 : i64} : (tensor<1x3x4xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3x4xi8>
// CHECK-NEXT:   %d = collage.dequantize_linear %q, %cs, %cz {axis = -2 : i64} : (tensor<1x3x4xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3x4xf32>
// CHECK-NEXT:   %u = collage.quantize_linear %d, %s, %z : (tensor<1x3x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4xui8>
// CHECK-NEXT:   %y = collage.dequantize_linear %u, %s, %z : (tensor<1x3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4xf32>
// CHECK-NEXT:   func.return %y : tensor<1x3x4xf32>
func.func @main(%x: tensor<1x3x4xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<1x3x4xf32> {
  %cs = collage.constant dense<[0.5, 0.25, 0.125]> : tensor<3xf32>
  %cz = collage.constant dense<[0, 1, -2]> : tensor<3xi8>
  %q = collage.quantize_linear %x, %cs, %cz {axis = 1 : i64} : (tensor<1x3x4xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3x4xi8>
  %d = collage.dequantize_linear %q, %cs, %cz {axis = -2 : i64} : (tensor<1x3x4xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<1x3x4xf32>
  %u = collage.quantize_linear %d, %s, %z : (tensor<1x3x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4xui8>
  %y = collage.dequantize_linear %u, %s, %z : (tensor<1x3x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x3x4xf32>
  func.return %y : tensor<1x3x4xf32>
}

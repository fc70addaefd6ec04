// RUN: collage-opt %s | collage-opt | filecheck %s
// RUN: collage-opt %s --print-op-generic | collage-opt | filecheck %s

// Kernel and composite regions (with their collage.yield) survive printing and
// re-parsing, in custom and generic form.

// CHECK:      %r, %s = collage.kernel "tvm"(%x, %w) {label = "conv2d_relu", cost = 1.500000e-04 : f64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
// CHECK-NEXT: ^bb0(%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>):
// CHECK-NEXT:   %c = collage.composite "conv2d"(%a, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
// CHECK-NEXT:   ^bb0(%p: tensor<1x3x8x8xf32>, %q: tensor<4x3x3x3xf32>):
// CHECK-NEXT:     %y = collage.conv2d %p, %q
// CHECK-NEXT:     collage.yield %y : tensor<1x4x6x6xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   %d = collage.relu %c : tensor<1x4x6x6xf32>
// CHECK-NEXT:   collage.yield %c, %d : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %e = collage.kernel "onnxruntime"() : () -> tensor<2xf32> {
// CHECK-NEXT:   %k = collage.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK-NEXT:   collage.yield %k : tensor<2xf32>
// CHECK-NEXT: }
func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %r, %s = collage.kernel "tvm"(%x, %w) {label = "conv2d_relu", cost = 1.500000e-04 : f64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  ^bb0(%a: tensor<1x3x8x8xf32>, %b: tensor<4x3x3x3xf32>):
    %c = collage.composite "conv2d"(%a, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
    ^bb0(%p: tensor<1x3x8x8xf32>, %q: tensor<4x3x3x3xf32>):
      %y = collage.conv2d %p, %q {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
      collage.yield %y : tensor<1x4x6x6xf32>
    }
    %d = collage.relu %c : tensor<1x4x6x6xf32>
    collage.yield %c, %d : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
  }
  %e = collage.kernel "onnxruntime"() : () -> tensor<2xf32> {
    %k = collage.constant dense<0.5> : tensor<2xf32>
    collage.yield %k : tensor<2xf32>
  }
  func.return %r, %s : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}

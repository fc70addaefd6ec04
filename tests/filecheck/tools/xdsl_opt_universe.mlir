// Stock xdsl-opt sees the collage dialect and passes through the xdsl.universe entry point.
// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s -p collage-fuse-ops | filecheck %s --check-prefix=PASS

// CHECK:      func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
// CHECK-NEXT:   %c = collage.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NEXT:   %a = collage.add %x, %c : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:   %r = collage.relu %a : tensor<1x4xf32>
// CHECK-NEXT:   func.return %r : tensor<1x4xf32>

// PASS: collage.kernel "tvm"(%x) {label = "add_relu"}
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %c = collage.constant dense<2.0> : tensor<4xf32>
  %a = collage.add %x, %c : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %r = collage.relu %a : tensor<1x4xf32>
  func.return %r : tensor<1x4xf32>
}

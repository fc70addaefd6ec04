// The depth limit applies to combined candidates, not to the maximal region; a region
// equal to a combined candidate is that candidate (unlimited, the chain combines whole:
// tvm.mlir).
// RUN: collage-opt %s -p 'collage-candidates{backends=tvm tvm-max-depth=2}' | filecheck %s

// CHECK:      // candidates @chain: 6
// CHECK-NEXT: tvm relu [%a] kind=elemwise label=-
// CHECK-NEXT: tvm tanh [%b] kind=elemwise label=-
// CHECK-NEXT: tvm exp [%c] kind=elemwise label=-
// CHECK-NEXT: tvm relu+tanh [%a, %b] kind=elemwise label=-
// CHECK-NEXT: tvm tanh+exp [%b, %c] kind=elemwise label=-
// CHECK-NEXT: tvm max.region [%a, %b, %c] kind=elemwise label=-
// CHECK-NEXT: builtin.module
func.func @chain(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = collage.relu %x : tensor<2x4xf32>
  %b = collage.tanh %a : tensor<2x4xf32>
  %c = collage.exp %b : tensor<2x4xf32>
  func.return %c : tensor<2x4xf32>
}

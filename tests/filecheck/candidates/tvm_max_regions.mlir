// With tvm-max-regions=false only the combined candidates remain.
// RUN: collage-opt %s -p 'collage-candidates{backends=tvm tvm-max-depth=2 tvm-max-regions=false}' | filecheck %s

// CHECK:      // candidates @pair: 5
// CHECK-NOT:  max.region
// CHECK:      builtin.module
func.func @pair(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = collage.relu %x : tensor<2x4xf32>
  %b = collage.tanh %a : tensor<2x4xf32>
  %c = collage.exp %b : tensor<2x4xf32>
  func.return %c : tensor<2x4xf32>
}

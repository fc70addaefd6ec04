// An op without a lowering stays as it is and is named on stderr; with strict=true it is one
// error line naming it.
// RUN: collage-opt %s -p collage-lower-linalg 2>&1 | filecheck %s
// RUN: not collage-opt %s -p collage-lower-linalg{strict=true} 2>&1 | filecheck %s --check-prefix=STRICT

// CHECK:      warning: collage-lower-linalg: %up (collage.resize): no lowering to linalg
// CHECK:      func.func @main
// CHECK-NEXT:   tensor.empty
// CHECK-NEXT:   %r = linalg.generic
// CHECK:        %up = collage.resize %{{.*}}
// STRICT:     error: {{.*}}: collage-lower-linalg: %up (collage.resize): no lowering to linalg
// STRICT-NOT: Traceback
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x8x8xf32> {
  %r = collage.relu %x : tensor<1x2x4x4xf32>
  %up = collage.resize %r {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} : tensor<1x2x4x4xf32> -> tensor<1x2x8x8xf32>
  func.return %up : tensor<1x2x8x8xf32>
}

// Search limits out of range end with one error line naming the option and the reason.
// RUN: not collage-opt %s -p 'collage-refine{budget=5 rounds=0}' 2>&1 | filecheck %s --check-prefix=ROUNDS
// RUN: not collage-opt %s -p 'collage-refine{budget=5 timeout=0}' 2>&1 | filecheck %s --check-prefix=TIMEOUT

// ROUNDS: error: {{.*}}errors.mlir: collage-refine: rounds must be at least 1, got 0
// TIMEOUT: error: {{.*}}errors.mlir: collage-refine: timeout must be positive, got 0
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

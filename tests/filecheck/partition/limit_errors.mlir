// Negative candidate limits end with one error line naming the option and its meaning at 0.
// RUN: not collage-opt %s -p 'collage-partition{estimator=mock tvm-max-depth=-2}' 2>&1 | filecheck %s --check-prefix=DEPTH
// RUN: not collage-opt %s -p 'collage-candidates{byoc-max-depth=-1}' 2>&1 | filecheck %s --check-prefix=BYOCDEPTH
// RUN: not collage-opt %s -p 'collage-candidates{max-candidates-per-node=-1}' 2>&1 | filecheck %s --check-prefix=CAP

// DEPTH: error: {{.*}}errors.mlir: tvm-max-depth must be >= 0 (0: unbounded), got -2
// BYOCDEPTH: error: {{.*}}errors.mlir: byoc-max-depth must be >= 0 (0: unbounded), got -1
// CAP: error: {{.*}}errors.mlir: max-candidates-per-node must be >= 0 (0: no cap), got -1
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}

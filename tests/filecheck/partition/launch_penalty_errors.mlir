// A negative launch penalty ends with one error line; whole numbers are fine where
// seconds are expected (launch-penalty=1, measure-timeout=5).
// RUN: not collage-opt %s -p 'collage-partition{launch-penalty=-1}' 2>&1 | filecheck %s --check-prefix=PENALTY
// RUN: collage-opt %s -p 'collage-partition{launch-penalty=1 measure-timeout=5}' | filecheck %s --check-prefix=INTS

// PENALTY: error: {{.*}}errors.mlir: search: launch penalty must be finite seconds >= 0, not -1
// INTS: collage.kernel
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}

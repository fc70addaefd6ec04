// What the input asks for cannot be done: an op no enabled backend supports; a function
// partitioned twice.
// RUN: not collage-opt %s -p 'collage-partition{backends=test backend-options="test: ops=relu"}' 2>&1 | filecheck %s --check-prefix=UNCOVERED
// RUN: not collage-opt %s -p 'collage-fuse-ops,collage-partition{backends=tvm}' 2>&1 | filecheck %s --check-prefix=TWICE

// UNCOVERED: error: {{.*}}no enabled backend supports collage.sigmoid
// TWICE: error: {{.*}}errors.mlir: @main already holds collage.kernel regions; a function is partitioned once
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// collage-refine works on kernel regions: before collage-partition (whatever the budget)
// or after collage-outline there are none, and it says where it belongs.
// RUN: not collage-opt %s -p 'collage-refine{budget=5 scorer=mock}' 2>&1 | filecheck %s
// RUN: not collage-opt %s -p 'collage-refine{budget=auto scorer=mock}' 2>&1 | filecheck %s
// RUN: not collage-opt %s -p 'collage-fuse-ops,collage-outline,collage-refine{budget=5 scorer=mock}' 2>&1 | filecheck %s

// CHECK: error: {{.*}}errors.mlir: collage-refine: no function holds collage.kernel regions; run it after collage-partition and before collage-outline
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// Bad mock costs end with one error line naming the entry and the reason.
// RUN: not collage-opt %s -p 'collage-partition{mock-costs="tvm:1,tvn:2"}' 2>&1 | filecheck %s --check-prefix=MOCKNAME
// RUN: not collage-opt %s -p 'collage-partition{mock-costs="tvm:inf"}' 2>&1 | filecheck %s --check-prefix=MOCKINF

// MOCKNAME: error: {{.*}}errors.mlir: mock-costs: unknown backend 'tvn' (available: {{.*}}tvm)
// MOCKINF: error: {{.*}}errors.mlir: mock-costs: bad entry 'tvm:inf': expected BACKEND:SECONDS with SECONDS a finite number >= 0
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}

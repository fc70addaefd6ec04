// What the mock scorer reads: a malformed mock-costs entry, a negative mock-transfer, a
// cost database that does not exist; one error line each.
// RUN: not collage-opt %s -p 'collage-refine{budget=5 scorer=mock mock-costs="tvm"}' 2>&1 | filecheck %s --check-prefix=MOCK
// RUN: not collage-opt %s -p 'collage-refine{budget=5 scorer=mock mock-transfer=-1}' 2>&1 | filecheck %s --check-prefix=TRANSFER
// RUN: not collage-opt %s -p 'collage-partition{estimator=mock},collage-refine{budget=5 scorer=mock cost-db="%t/none.sqlite"}' 2>&1 | filecheck %s --check-prefix=COSTDB

// MOCK: error: {{.*}}errors.mlir: mock-costs: bad entry 'tvm': expected
// TRANSFER: error: {{.*}}errors.mlir: collage-refine: mock-transfer must be >= 0, got -1
// COSTDB: error: {{.*}}errors.mlir: collage-refine: cost database {{.*}}none.sqlite does not exist (collage-partition's cost-db fills it)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

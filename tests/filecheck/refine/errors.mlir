// Bad options end with one error line naming the option and the reason, budget=0 included.
// RUN: not collage-opt %s -p 'collage-refine{budget=-1}' 2>&1 | filecheck %s --check-prefix=BUDGET
// RUN: not collage-opt %s -p 'collage-refine{budget=0 min-gain=1}' 2>&1 | filecheck %s --check-prefix=GAIN
// RUN: not collage-opt %s -p 'collage-refine{budget=5 rounds=0}' 2>&1 | filecheck %s --check-prefix=ROUNDS
// RUN: not collage-opt %s -p 'collage-refine{budget=5 timeout=0}' 2>&1 | filecheck %s --check-prefix=TIMEOUT
// RUN: not collage-opt %s -p 'collage-refine{budget=5 scorer=guess}' 2>&1 | filecheck %s --check-prefix=SCORER
// RUN: not collage-opt %s -p 'collage-refine{budget=5 scorer=mock mock-costs="tvm"}' 2>&1 | filecheck %s --check-prefix=MOCK
// RUN: not collage-opt %s -p 'collage-refine{budget=5 scorer=mock mock-transfer=-1}' 2>&1 | filecheck %s --check-prefix=TRANSFER
// RUN: not collage-opt %s -p 'collage-refine{backends=tvm,test backend-options="test: ops=relu" budget=5}' 2>&1 | filecheck %s --check-prefix=MEASURED
// RUN: not collage-opt %s -p 'collage-refine{backends=tvm,cuda budget=5 scorer=mock}' 2>&1 | filecheck %s --check-prefix=BACKEND
// RUN: not collage-opt %s -p 'collage-refine{budget=ten}' 2>&1 | filecheck %s --check-prefix=PARSE
// RUN: not collage-opt %s -p 'collage-partition{estimator=mock},collage-refine{budget=5 scorer=mock cost-db="%t/none.sqlite"}' 2>&1 | filecheck %s --check-prefix=COSTDB
// RUN: not collage-opt %s -p 'collage-refine{budget=5 scorer=mock}' 2>&1 | filecheck %s --check-prefix=UNPARTITIONED
// RUN: not collage-opt %s -p 'collage-refine{budget=auto scorer=mock}' 2>&1 | filecheck %s --check-prefix=UNPARTITIONED
// RUN: not collage-opt %s -p 'collage-fuse-ops,collage-outline,collage-refine{budget=5 scorer=mock}' 2>&1 | filecheck %s --check-prefix=UNPARTITIONED

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// BUDGET: error: {{.*}}errors.mlir: collage-refine: budget must be auto or a finite number of seconds >= 0, got -1.0
// GAIN: error: {{.*}}errors.mlir: collage-refine: min-gain must be in [0, 1), got 1.0
// ROUNDS: error: {{.*}}errors.mlir: collage-refine: rounds must be at least 1, got 0
// TIMEOUT: error: {{.*}}errors.mlir: collage-refine: timeout must be positive, got 0
// SCORER: error: {{.*}}errors.mlir: collage-refine: unknown scorer 'guess' (measured or mock)
// MOCK: error: {{.*}}errors.mlir: mock-costs: bad entry 'tvm': expected
// TRANSFER: error: {{.*}}errors.mlir: collage-refine: mock-transfer must be >= 0, got -1
// MEASURED: error: {{.*}}errors.mlir: collage-refine: scorer=measured runs every kernel; backend 'test' has no codegen hook (hooks exist for onnxruntime, openvino, tvm); use scorer=mock for toy backends
// BACKEND: error: {{.*}}errors.mlir: unknown backend 'cuda'
// PARSE: error: {{.*}}errors.mlir: collage-refine: budget must be auto or a finite number of seconds >= 0, got 'ten'
// COSTDB: error: {{.*}}errors.mlir: collage-refine: cost database {{.*}}none.sqlite does not exist (collage-partition's cost-db fills it)
// UNPARTITIONED: error: {{.*}}errors.mlir: collage-refine: no function holds collage.kernel regions; run it after collage-partition and before collage-outline

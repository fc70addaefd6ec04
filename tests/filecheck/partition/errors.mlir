// Bad options and impossible requests end with one error line naming the reason.
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" estimator=measured}' 2>&1 | filecheck %s --check-prefix=MEASURED
// RUN: not collage-opt %s -p 'collage-partition{estimator=guess}' 2>&1 | filecheck %s --check-prefix=ESTIMATOR
// RUN: not collage-opt %s -p 'collage-partition{backends=test backend-options="test: ops=relu"}' 2>&1 | filecheck %s --check-prefix=UNCOVERED
// RUN: not collage-opt %s -p 'collage-partition{estimator=mock tvm-max-depth=-2}' 2>&1 | filecheck %s --check-prefix=DEPTH
// RUN: not collage-opt %s -p 'collage-candidates{byoc-max-depth=-1}' 2>&1 | filecheck %s --check-prefix=BYOCDEPTH
// RUN: not collage-opt %s -p 'collage-partition{mock-costs="tvm:1,tvn:2"}' 2>&1 | filecheck %s --check-prefix=MOCKNAME
// RUN: not collage-opt %s -p 'collage-partition{mock-costs="tvm:inf"}' 2>&1 | filecheck %s --check-prefix=MOCKINF
// RUN: not collage-opt %s -p 'collage-partition{launch-penalty=-1}' 2>&1 | filecheck %s --check-prefix=PENALTY
// RUN: collage-opt %s -p 'collage-partition{launch-penalty=1 measure-timeout=5}' | filecheck %s --check-prefix=INTS
// RUN: not collage-opt %s -p 'collage-candidates{max-candidates-per-node=-1}' 2>&1 | filecheck %s --check-prefix=CAP

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// No fake numbers: measuring needs a codegen hook for every enabled backend.
// MEASURED: error: {{.*}}errors.mlir: collage-partition: estimator=measured needs a codegen hook for backend 'test'
// ESTIMATOR: error: {{.*}}errors.mlir: collage-partition: unknown estimator 'guess' (mock or measured)
// UNCOVERED: error: {{.*}}no enabled backend supports collage.sigmoid
// DEPTH: error: {{.*}}errors.mlir: tvm-max-depth must be >= 0 (0: unbounded), got -2
// BYOCDEPTH: error: {{.*}}errors.mlir: byoc-max-depth must be >= 0 (0: unbounded), got -1
// MOCKNAME: error: {{.*}}errors.mlir: mock-costs: unknown backend 'tvn' (available: {{.*}}tvm)
// MOCKINF: error: {{.*}}errors.mlir: mock-costs: bad entry 'tvm:inf': expected BACKEND:SECONDS with SECONDS a finite number >= 0
// PENALTY: error: {{.*}}errors.mlir: search: launch penalty must be finite seconds >= 0, not -1
// INTS: collage.kernel
// CAP: error: {{.*}}errors.mlir: max-candidates-per-node must be >= 0 (0: no cap), got -1

// A function is partitioned once.
// RUN: not collage-opt %s -p 'collage-fuse-ops,collage-partition{backends=tvm}' 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE: error: {{.*}}errors.mlir: @main already holds collage.kernel regions; a function is partitioned once

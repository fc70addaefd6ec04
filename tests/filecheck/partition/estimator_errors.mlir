// A bad estimator choice ends with one error line naming the reason; no fake numbers:
// measuring needs a codegen hook for every enabled backend.
// RUN: not collage-opt %s -p 'collage-partition{estimator=guess}' 2>&1 | filecheck %s --check-prefix=ESTIMATOR
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" estimator=measured}' 2>&1 | filecheck %s --check-prefix=MEASURED

// ESTIMATOR: error: {{.*}}errors.mlir: collage-partition: unknown estimator 'guess' (mock or measured)
// MEASURED: error: {{.*}}errors.mlir: collage-partition: estimator=measured needs a codegen hook for backend 'test'
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}

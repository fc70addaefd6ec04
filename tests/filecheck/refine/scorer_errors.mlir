// The scorer and the backends it scores: an unknown scorer, a measured scorer with a toy
// backend that has no codegen hook, an unknown backend; one error line each.
// RUN: not collage-opt %s -p 'collage-refine{budget=5 scorer=guess}' 2>&1 | filecheck %s --check-prefix=SCORER
// RUN: not collage-opt %s -p 'collage-refine{backends=tvm,test backend-options="test: ops=relu" budget=5}' 2>&1 | filecheck %s --check-prefix=MEASURED
// RUN: not collage-opt %s -p 'collage-refine{backends=tvm,cuda budget=5 scorer=mock}' 2>&1 | filecheck %s --check-prefix=BACKEND

// SCORER: error: {{.*}}errors.mlir: collage-refine: unknown scorer 'guess' (measured or mock)
// MEASURED: error: {{.*}}errors.mlir: collage-refine: scorer=measured runs every kernel; backend 'test' has no codegen hook (hooks exist for iree, onnxruntime, openvino, tvm); use scorer=mock for toy backends
// BACKEND: error: {{.*}}errors.mlir: unknown backend 'cuda'
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

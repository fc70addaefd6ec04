// A pure op whose result nothing reads makes no kernel: collage-partition erases it
// instead of handing ONNX Runtime a kernel without outputs, which it cannot build, and
// the result runs (the baseline partitioners: baselines/dead.mlir).
// RUN: collage-opt %s -p 'collage-partition{backends=onnxruntime estimator=mock}' | filecheck %s
// RUN: collage run %s --backends onnxruntime --estimator mock | filecheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %s = collage.kernel "onnxruntime"(%x)
// CHECK-NOT:     collage.relu
// CHECK:         collage.sigmoid
// CHECK-NOT:     collage.relu
// CHECK-NOT:     collage.mul

// EXEC: output0: shape=[1, 8] dtype=float32
func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %dead = collage.relu %x : tensor<1x8xf32>
  %w = collage.constant dense<2.0> : tensor<1x8xf32>
  %also_dead = collage.mul %dead, %w : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %s = collage.sigmoid %x : tensor<1x8xf32>
  func.return %s : tensor<1x8xf32>
}

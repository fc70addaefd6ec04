// A kernel nested in a kernel is a verifier error naming the file and the op, before
// collage-outline runs (it used to stop with "Cannot replace an operation without a parent").
// RUN: not collage-opt %s -p collage-outline 2>&1 | filecheck %s

// CHECK:      error: {{.*}}errors.mlir: collage.kernel cannot be nested in a collage.kernel
// CHECK-NEXT:   in: %s = "collage.kernel"(%a)
// CHECK-NOT:  Traceback
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.kernel "tvm"(%x) {label = "relu"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = collage.kernel "onnxruntime"(%a) {label = "inner"} : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      %c = collage.relu %b : tensor<4xf32>
      collage.yield %c : tensor<4xf32>
    }
    collage.yield %s : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

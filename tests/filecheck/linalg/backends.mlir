// With backends=iree only the iree kernels are lowered; every other kernel becomes a
// private declaration that keeps its collage.backend, so the calls in @main name it for the
// flow to resolve. The result verifies with iree-opt.
// RUN: collage-opt %s -p 'collage-lower-linalg{backends=iree}' | filecheck %s
// RUN: collage-opt %s -p 'collage-lower-linalg{backends=iree}' | iree-opt --verify-each -o /dev/null

// CHECK:      func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:   %a = func.call @collage_iree_relu(%x)
// CHECK-NEXT:   %b = func.call @collage_onnxruntime_tanh(%a)
// CHECK-NEXT:   func.return %b
// CHECK:      func.func private @collage_iree_relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {collage.backend = "iree", collage.kernel} {
// CHECK-NEXT:   %0 = tensor.empty() : tensor<4x8xf32>
// CHECK-NEXT:   %r = linalg.generic
// CHECK:          arith.maximumf
// CHECK:        func.return %r
// CHECK:      func.func private @collage_onnxruntime_tanh(tensor<4x8xf32>) -> tensor<4x8xf32> attributes {collage.backend = "onnxruntime", collage.kernel}
// CHECK-NOT:  collage.tanh
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = func.call @collage_iree_relu(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = func.call @collage_onnxruntime_tanh(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %b : tensor<4x8xf32>
}
func.func private @collage_iree_relu(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {collage.backend = "iree", collage.kernel} {
  %r = collage.relu %x : tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}
func.func private @collage_onnxruntime_tanh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {collage.backend = "onnxruntime", collage.kernel} {
  %t = collage.tanh %x : tensor<4x8xf32>
  func.return %t : tensor<4x8xf32>
}

// RUN: collage-opt %s -p 'collage-candidates{backends=openvino byoc-max-depth=2}' | filecheck %s

// Predicate-based BYOC: every supported op, unions of touching ones up to the depth limit
// (only valid one-exit kernels: %a feeds two ops, so no pair holds it), and the maximal
// supported region.
// CHECK:      // candidates @main: 8
// CHECK-NEXT: openvino relu [%a] kind=elemwise label=-
// CHECK-NEXT: openvino tanh [%b] kind=elemwise label=-
// CHECK-NEXT: openvino exp [%c] kind=elemwise label=-
// CHECK-NEXT: openvino add [%s] kind=broadcast label=-
// CHECK-NEXT: openvino tanh+add [%b, %s] kind=broadcast label=-
// CHECK-NEXT: openvino exp+add [%c, %s] kind=broadcast label=-
// CHECK-NEXT: openvino tanh+exp+add [%b, %c, %s] kind=broadcast label=-
// CHECK-NEXT: openvino max.region [%a, %b, %c, %s] kind=broadcast label=-
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = collage.relu %x : tensor<2x4xf32>
  %b = collage.tanh %a : tensor<2x4xf32>
  %c = collage.exp %a : tensor<2x4xf32>
  %s = collage.add %b, %c : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %s : tensor<2x4xf32>
}

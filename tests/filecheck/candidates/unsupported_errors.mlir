// An op that no enabled backend supports (a bf16 relu, with openvino alone) is one error
// line naming the op, its node and the enabled backends; no traceback.
// RUN: not collage-opt %s -p 'collage-candidates{backends=openvino}' 2>&1 | filecheck %s

// CHECK: error: {{.*}}errors.mlir: no enabled backend supports collage.relu (node %h in @half); enabled backends: openvino
// CHECK-NOT: Traceback
func.func @half(%x: tensor<2x4xbf16>) -> tensor<2x4xbf16> {
  %h = collage.relu %x : tensor<2x4xbf16>
  func.return %h : tensor<2x4xbf16>
}

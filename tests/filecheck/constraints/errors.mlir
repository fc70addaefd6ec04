// Constraints that cannot be met end with one line naming the op and the backend.
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" pin="s=test"}' 2>&1 | filecheck %s --check-prefix=CANNOT
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" no-fallback=true}' 2>&1 | filecheck %s --check-prefix=FALLBACK
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,onnxruntime forbid="op:sigmoid=tvm,onnxruntime"}' 2>&1 | filecheck %s --check-prefix=FORBIDDEN
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm pin="r=openvino"}' 2>&1 | filecheck %s --check-prefix=DISABLED
// RUN: not collage-opt %s -p 'collage-candidates{pin="r"}' 2>&1 | filecheck %s --check-prefix=MALFORMED
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,onnxruntime pin="op:relu=tvm;r=onnxruntime"}' 2>&1 | filecheck %s --check-prefix=TWICE

// CANNOT: error: {{.*}}: op %s (sigmoid) is pinned to test, which cannot run it (backends that can: tvm)
// FALLBACK: error: {{.*}}: no-fallback: 1 op(s) no enabled BYOC backend accepts: op %s (sigmoid)
// FORBIDDEN: error: {{.*}}: op %s (sigmoid): the constraints forbid every backend that can run it (onnxruntime, tvm)
// DISABLED: error: {{.*}}: pin: 'r' names backend 'openvino', which is not enabled (enabled: tvm)
// MALFORMED: error: {{.*}}: pin: expected SELECTOR=BACKEND[,BACKEND...] separated by ';', got 'r'
// TWICE: error: {{.*}}: op %r (relu) is pinned to onnxruntime and tvm (pin 'op:relu', pin 'r')
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.relu %x : tensor<4xf32>
  %s = collage.sigmoid %r : tensor<4xf32>
  func.return %s : tensor<4xf32>
}

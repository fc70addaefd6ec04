// Bad backend options end with one error line naming the backend, op or style.
// RUN: not collage-opt %s -p 'collage-candidates{backends=tvm,nope}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not collage-opt %s -p 'collage-candidates{backends=test backend-options="test: ops=relu,frobnicate"}' 2>&1 | filecheck %s --check-prefix=BADOP
// RUN: not collage-opt %s -p 'collage-candidates{backends=test backend-options="test: ops=relu fusion=greedy"}' 2>&1 | filecheck %s --check-prefix=BADSTYLE

// UNKNOWN: unknown backend 'nope'; available: iree, onnxruntime, openvino, test, tvm
// BADOP: test backend: unknown op 'frobnicate'
// BADSTYLE: test backend: unknown fusion style 'greedy' (none, tvm or arbitrary)
func.func @half(%x: tensor<2x4xf16>) -> tensor<2x4xf16> {
  %h = collage.relu %x : tensor<2x4xf16>
  func.return %h : tensor<2x4xf16>
}

// A plan saved by one partition and followed by the next gives the same kernels.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,onnxruntime mock-costs="tvm:1,onnxruntime:2" pin="op:sigmoid=onnxruntime" save-plan="%t.json"}' | filecheck %s
// RUN: filecheck %s --check-prefix=FILE --input-file=%t.json
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,onnxruntime mock-costs="tvm:1,onnxruntime:2" plan-file="%t.json"}' | filecheck %s

// FILE:      {"format": "collage-plan", "version": 1, "backends": ["tvm", "onnxruntime"],
// FILE-NEXT:  "functions": {
// FILE-NEXT:   "main": [
// FILE-NEXT:    {"node": "a", "op": "relu", "backend": "tvm", "kernel": 0},
// FILE-NEXT:    {"node": "b", "op": "sigmoid", "backend": "onnxruntime", "kernel": 1},
// FILE-NEXT:    {"node": "c", "op": "relu", "backend": "tvm", "kernel": 2},
// FILE-NEXT:    {"node": "d", "op": "relu", "backend": "tvm", "kernel": 2}
// FILE-NEXT:   ]

// CHECK-LABEL: func.func @main
// CHECK:         %a = collage.kernel "tvm"(%x) {label = "relu"
// CHECK:         %b = collage.kernel "onnxruntime"(%a) {label = "sigmoid"
// CHECK:         %d = collage.kernel "tvm"(%b) {label = "relu"
// CHECK:         collage.relu
// CHECK:         collage.relu
// CHECK:         func.return %d
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %d = collage.relu %c : tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// RUN: collage-opt %s -p 'collage-partition{backends=tvm,onnxruntime mock-costs="tvm:1,onnxruntime:2" forbid="b*=tvm"}' | filecheck %s

// tvm is cheaper, but may not run the ops named b*: they go to onnxruntime.
// CHECK-LABEL: func.func @main
// CHECK:         %a = collage.kernel "tvm"(%x) {label = "relu"
// CHECK:         %b2 = collage.kernel "onnxruntime"(%a) {label = "relu"
// CHECK:         %c = collage.kernel "tvm"(%b2) {label = "relu"
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b1 = collage.relu %a : tensor<4xf32>
  %b2 = collage.relu %b1 : tensor<4xf32>
  %c = collage.relu %b2 : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,onnxruntime mock-costs="tvm:1,onnxruntime:2" pin="op:sigmoid=onnxruntime"}' | filecheck %s

// Cheaper on tvm, but the sigmoid is pinned by kind to onnxruntime.
// CHECK-LABEL: func.func @by_kind
// CHECK-NEXT:    %a = collage.kernel "tvm"(%x) {label = "relu"
// CHECK:         %b = collage.kernel "onnxruntime"(%a) {label = "sigmoid"
// CHECK:         %c = collage.kernel "tvm"(%b) {label = "relu"
func.func @by_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// -----

// An op's own collage.backend attribute pins it (the design doc's on_device).
// CHECK-LABEL: func.func @by_attribute
// CHECK:         collage.kernel "onnxruntime"(%x) {label = "relu"
// CHECK:         collage.kernel "tvm"(%a) {label = "relu"
func.func @by_attribute(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x {collage.backend = "onnxruntime"} : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// collage-assign hands a graph compiler the whole graph as one region, or with
// fusion=none one kernel per op; the output tuple stays on the host either way.
// RUN: collage-opt %s -p 'collage-assign{backend=onnxruntime}' | filecheck %s --check-prefix=REGION
// RUN: collage-opt %s -p 'collage-assign{backend=onnxruntime fusion=none}' | filecheck %s --check-prefix=PEROP

// REGION-LABEL: func.func @main
// REGION-NEXT:    %b, %d = collage.kernel "onnxruntime"(%x, %y) {label = "relu_sigmoid_add_reduce_max_sub"}
// REGION:         %t = collage.tuple %b, %d
// REGION-NEXT:    func.return %t

// PEROP-LABEL: func.func @main
// PEROP-COUNT-5: collage.kernel "onnxruntime"
// PEROP:         %t = collage.tuple %b, %d
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> {
  %a = collage.relu %x : tensor<4xf32>
  %s = collage.sigmoid %a : tensor<4xf32>
  %b = collage.add %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = collage.reduce_max %b {keepdims = true} : tensor<4xf32> -> tensor<1xf32>
  %d = collage.sub %y, %m : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %t = collage.tuple %b, %d : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  func.return %t : tuple<tensor<4xf32>, tensor<4xf32>>
}

// RUN: collage-opt %s --split-input-file -p 'collage-assign{backend=onnxruntime}' | filecheck %s --check-prefix=REGION
// RUN: collage-opt %s --split-input-file -p 'collage-assign{backend=onnxruntime fusion=none}' | filecheck %s --check-prefix=PEROP
// RUN: collage-opt %s --split-input-file -p 'collage-assign{backend=tvm}' | filecheck %s --check-prefix=TVM
// RUN: collage-opt %s --split-input-file -p 'collage-assign{backend=tvm fusion=whole}' | filecheck %s --check-prefix=WHOLE
// RUN: not collage-opt %s -p 'collage-assign{backend=test backend-options="test: ops=relu,add"}' 2>&1 | filecheck %s --check-prefix=NOSUPPORT

// A graph compiler gets the whole graph as one region; per op, each op is a kernel; tvm
// gets its FuseOps groups, or with fusion=whole the whole graph too, the tuple included
// (TVM fuses inside the one module). Otherwise the tuple stays on the host.

func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> {
  %a = collage.relu %x : tensor<4xf32>
  %s = collage.sigmoid %a : tensor<4xf32>
  %b = collage.add %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = collage.reduce_max %b {keepdims = true} : tensor<4xf32> -> tensor<1xf32>
  %d = collage.sub %y, %m : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %t = collage.tuple %b, %d : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  func.return %t : tuple<tensor<4xf32>, tensor<4xf32>>
}

// REGION-LABEL: func.func @main
// REGION-NEXT:    %b, %d = collage.kernel "onnxruntime"(%x, %y) {label = "relu_sigmoid_add_reduce_max_sub"}
// REGION:         %t = collage.tuple %b, %d
// REGION-NEXT:    func.return %t

// PEROP-LABEL: func.func @main
// PEROP-COUNT-5: collage.kernel "onnxruntime"
// PEROP:         %t = collage.tuple %b, %d

// TVM-LABEL: func.func @main
// TVM-NEXT:    %b = collage.kernel "tvm"(%x) {label = "relu_sigmoid_add"}
// TVM:         %m = collage.kernel "tvm"(%b) {label = "reduce_max"}
// TVM:         %d = collage.kernel "tvm"(%y, %m) {label = "sub"}
// TVM:         %t = collage.tuple %b, %d

// WHOLE-LABEL: func.func @main
// WHOLE-NEXT:    %t = collage.kernel "tvm"(%x, %y) {label = "relu_sigmoid_add_reduce_max_sub_tuple"}
// WHOLE:           collage.yield %t_1
// WHOLE-NEXT:    }
// WHOLE-NEXT:    func.return %t

// NOSUPPORT: error: {{.*}}assign.mlir: collage-assign: backend 'test' does not support collage.sigmoid (node %s in @main)

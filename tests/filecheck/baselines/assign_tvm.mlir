// collage-assign hands tvm its FuseOps groups, the tuple staying on the host; with
// fusion=whole tvm gets the whole graph, the tuple included (TVM fuses inside the module).
// RUN: collage-opt %s -p 'collage-assign{backend=tvm}' | filecheck %s --check-prefix=TVM
// RUN: collage-opt %s -p 'collage-assign{backend=tvm fusion=whole}' | filecheck %s --check-prefix=WHOLE

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
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> {
  %a = collage.relu %x : tensor<4xf32>
  %s = collage.sigmoid %a : tensor<4xf32>
  %b = collage.add %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %m = collage.reduce_max %b {keepdims = true} : tensor<4xf32> -> tensor<1xf32>
  %d = collage.sub %y, %m : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %t = collage.tuple %b, %d : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  func.return %t : tuple<tensor<4xf32>, tensor<4xf32>>
}

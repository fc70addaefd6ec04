// collage-refine on a partitioned function takes its kernels apart and puts them together
// again; a composite made before partitioning (collage.primitive) stays one node, whole.
// RUN: collage-opt %s -p 'collage-composite-patterns{patterns="fma=mul+add"},collage-partition{backends=tvm,test backend-options="test: ops=relu,mul,add" mock-costs="tvm:1,test:0.5"},collage-refine{backends=tvm,test backend-options="test: ops=relu,mul,add" budget=5 scorer=mock mock-costs="tvm:1,test:0.5" mock-transfer=2}' 2>/dev/null | filecheck %s

// The mock transfer cost makes one tvm kernel cheapest; both fmas are in it, whole.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %a2 = collage.kernel "tvm"(%x, %y) {label = "fma_sigmoid_relu"}
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %a = collage.composite "fma"(%x_1, %y_1) {collage.primitive}
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        collage.mul
// CHECK-NEXT:        collage.add
// CHECK-NEXT:        collage.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      %s = collage.sigmoid %a
// CHECK-NEXT:      %r = collage.relu %s
// CHECK-NEXT:      %a2_1 = collage.composite "fma"(%r, %y_1, %x_1) {collage.primitive}
// CHECK-NEXT:      ^bb0
// CHECK-NEXT:        collage.mul
// CHECK-NEXT:        collage.add
// CHECK-NEXT:        collage.yield
// CHECK-NEXT:      }
// CHECK-NEXT:      collage.yield %a2_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %a2
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %m = collage.mul %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = collage.add %m, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = collage.sigmoid %a : tensor<4xf32>
  %r = collage.relu %s : tensor<4xf32>
  %m2 = collage.mul %r, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a2 = collage.add %m2, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a2 : tensor<4xf32>
}

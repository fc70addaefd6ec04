// A pure op whose result nothing reads makes no kernel: the baseline partitioners erase
// it instead of handing ONNX Runtime a kernel without outputs, which it cannot build
// (collage-partition does too: partition/dead.mlir).
// RUN: collage-opt %s -p 'collage-assign{backend=onnxruntime}' | filecheck %s
// RUN: collage-opt %s -p 'collage-partition-for{backend=onnxruntime}' | filecheck %s
// RUN: collage-opt %s -p 'collage-fuse-ops' | filecheck %s --check-prefix=TVM

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %s = collage.kernel "onnxruntime"(%x)
// CHECK-NOT:     collage.relu
// CHECK:         collage.sigmoid
// CHECK-NOT:     collage.relu
// CHECK-NOT:     collage.mul

// TVM-LABEL: func.func @main
// TVM-NOT:     collage.relu
// TVM-NOT:     collage.constant
// TVM:         collage.sigmoid
// TVM-NOT:     collage.relu
func.func @main(%x: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %dead = collage.relu %x : tensor<1x8xf32>
  %w = collage.constant dense<2.0> : tensor<1x8xf32>
  %also_dead = collage.mul %dead, %w : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %s = collage.sigmoid %x : tensor<1x8xf32>
  func.return %s : tensor<1x8xf32>
}

// Partition then outline: the chosen kernels become private functions called from @main;
// the two structurally equal relu kernels share one. Stock xdsl-opt re-parses the result.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:1,test:2" tvm-max-depth=1 tvm-max-regions=false},collage-outline' | filecheck %s
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:1,test:2" tvm-max-depth=1 tvm-max-regions=false},collage-outline' | xdsl-opt | filecheck %s

// CHECK-LABEL: func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:    %a = func.call @collage_tvm_relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %b = func.call @collage_tvm_sigmoid(%a) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %c = func.call @collage_tvm_relu(%b) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %c
// CHECK:       func.func private @collage_tvm_relu({{.*}}) -> tensor<4xf32> attributes {collage.backend = "tvm", collage.cost = 1.000000e+00 : f64, collage.kernel}
// CHECK:       func.func private @collage_tvm_sigmoid(
// CHECK-NOT:   func.func
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// A diamond: the test backend's max depth decides between one fused kernel and singletons.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,add" byoc-max-regions=false tvm-max-regions=false byoc-max-depth=3 mock-costs="tvm:1.5,test:1"}' | filecheck %s --check-prefix=DIAMOND-FUSED
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,add" byoc-max-regions=false tvm-max-regions=false byoc-max-depth=1 mock-costs="tvm:1.5,test:1"}' | filecheck %s --check-prefix=DIAMOND-SINGLE

// DIAMOND-FUSED-LABEL: func.func @diamond
// DIAMOND-FUSED-NEXT:    %d = collage.kernel "test"(%x) {label = "relu_add", cost = 3.439000e+00 : f64}
// DIAMOND-FUSED-COUNT-3:   collage.relu
// DIAMOND-FUSED-NEXT:      collage.add
// DIAMOND-FUSED-NEXT:      collage.yield
// DIAMOND-FUSED-NEXT:    }
// DIAMOND-FUSED-NEXT:    func.return %d

// DIAMOND-SINGLE-LABEL: func.func @diamond
// DIAMOND-SINGLE:         %a = collage.kernel "test"(%x) {label = "relu", cost = 1.000000e+00 : f64}
// DIAMOND-SINGLE:         %b = collage.kernel "test"(%a) {label = "relu"
// DIAMOND-SINGLE:         %c = collage.kernel "test"(%a) {label = "relu"
// DIAMOND-SINGLE:         %d = collage.kernel "test"(%b, %c) {label = "add"
func.func @diamond(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %a : tensor<4xf32>
  %d = collage.add %b, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

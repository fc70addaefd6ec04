// Five ops fused on the pricier tvm beat five singletons on the cheaper, non-fusing test
// backend (5 x 0.85 > 1 + 0.9 + 0.81 + 0.729 + 0.6561); at 0.8 per op the singletons win.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu fusion=none" byoc-max-regions=false tvm-max-regions=false mock-costs="tvm:1,test:0.85"}' | filecheck %s --check-prefix=FIVE-FUSED
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu fusion=none" byoc-max-regions=false tvm-max-regions=false mock-costs="tvm:1,test:0.8"}' | filecheck %s --check-prefix=FIVE-SINGLE

// FIVE-FUSED-LABEL: func.func @five
// FIVE-FUSED-NEXT:    %e = collage.kernel "tvm"(%x) {label = "relu", cost = 4.095100e+00 : f64}
// FIVE-FUSED-COUNT-5:   collage.relu
// FIVE-FUSED-NOT:     collage.kernel
// FIVE-FUSED:         func.return %e

// FIVE-SINGLE-LABEL: func.func @five
// FIVE-SINGLE-COUNT-5: collage.kernel "test"({{%[a-z]}}) {label = "relu", cost = 8.000000e-01 : f64}
func.func @five(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %d = collage.relu %c : tensor<4xf32>
  %e = collage.relu %d : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

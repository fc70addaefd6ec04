// MaxCoalesce: with one exit per candidate the fan-out can only be covered by three test
// singletons; afterwards the touching kernels merge into one of two results, costed as one
// kernel (2.71 = 1 + 0.9 + 0.81, less than the 3 its parts cost apart); coalesce=false
// keeps the singletons.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false mock-costs="tvm:2,test:1"}' | filecheck %s --check-prefix=COALESCE
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false mock-costs="tvm:2,test:1" coalesce=false}' | filecheck %s --check-prefix=APART

// COALESCE-LABEL: func.func @fan_out
// COALESCE-NEXT:    %b, %c = collage.kernel "test"(%x) {label = "relu", cost = 2.710000e+00 : f64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// COALESCE-COUNT-3:   collage.relu
// COALESCE-NEXT:      collage.yield
// COALESCE-NEXT:    }
// COALESCE-NEXT:    func.return %b, %c

// APART-LABEL: func.func @fan_out
// APART-NEXT:    %a = collage.kernel "test"(%x) {label = "relu", cost = 1.000000e+00 : f64}
// APART:         %b = collage.kernel "test"(%a)
// APART:         %c = collage.kernel "test"(%a)
func.func @fan_out(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %a : tensor<4xf32>
  func.return %b, %c : tensor<4xf32>, tensor<4xf32>
}

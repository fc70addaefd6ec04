// A toy backend described by options: supported ops, a chain pattern, a fusion style.
// RUN: collage-opt %s -p 'collage-candidates{backends=test backend-options="test: ops=conv2d,add,relu,reduce_sum fusion=none patterns=conv2d+add+relu" byoc-max-regions=false}' | filecheck %s --check-prefix=NONE
// RUN: collage-opt %s -p 'collage-candidates{backends=test backend-options="test: ops=conv2d,add,relu,reduce_sum fusion=tvm" byoc-max-regions=false}' | filecheck %s --check-prefix=TVM
// RUN: collage-opt %s -p 'collage-candidates{backends=tvm,test backend-options="test: ops=add,relu,reduce_sum fusion=arbitrary" byoc-max-depth=2}' | filecheck %s --check-prefix=ARB

// NONE:      // candidates @main: 5
// NONE-NEXT: test test.conv2d_add_relu [%c, %a, %r] kind=out_ewise_fusable label=test.conv2d_add_relu
// NONE-NEXT: test conv2d [%c] kind=out_ewise_fusable label=-
// NONE-NEXT: test add [%a] kind=broadcast label=-
// NONE-NEXT: test relu [%r] kind=elemwise label=-
// NONE-NEXT: test reduce_sum [%m] kind=comm_reduce label=-
// NONE-NEXT: builtin.module

// TVM:      // candidates @main: 9
// TVM-NEXT: test conv2d [%c] kind=out_ewise_fusable label=-
// TVM-NEXT: test add [%a] kind=broadcast label=-
// TVM-NEXT: test relu [%r] kind=elemwise label=-
// TVM-NEXT: test reduce_sum [%m] kind=comm_reduce label=-
// TVM-NEXT: test conv2d+add [%c, %a] kind=out_ewise_fusable label=-
// TVM-NEXT: test add+relu [%a, %r] kind=broadcast label=-
// TVM-NEXT: test relu+reduce_sum [%r, %m] kind=comm_reduce label=-
// TVM-NEXT: test conv2d+add+relu [%c, %a, %r] kind=out_ewise_fusable label=-
// TVM-NEXT: test add+relu+reduce_sum [%a, %r, %m] kind=comm_reduce label=-

// The conv2d is only tvm's; the test backend's region covers what it supports.
// ARB:      // candidates @main: 16
// ARB:      tvm max.region [%c, %a, %r, %m] kind=out_ewise_fusable label=-
// ARB:      test add [%a] kind=broadcast label=-
// ARB-NEXT: test relu [%r] kind=elemwise label=-
// ARB-NEXT: test reduce_sum [%m] kind=comm_reduce label=-
// ARB-NEXT: test add+relu [%a, %r] kind=broadcast label=-
// ARB-NEXT: test relu+reduce_sum [%r, %m] kind=comm_reduce label=-
// ARB-NEXT: test max.region [%a, %r, %m] kind=comm_reduce label=-
// ARB-NEXT: builtin.module
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> {
  %w = collage.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = collage.constant dense<0.5> : tensor<2x1x1xf32>
  %a = collage.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = collage.relu %a : tensor<1x2x4x4xf32>
  %m = collage.reduce_sum %r {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  func.return %m : tensor<1x2x1x1xf32>
}

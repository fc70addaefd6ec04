// RUN: collage-opt %s -p 'collage-candidates{backends=onnxruntime byoc-max-depth=3}' | filecheck %s
// RUN: collage-opt %s -p 'collage-candidates{backends=onnxruntime byoc-max-depth=3 byoc-max-regions=false}' | filecheck %s --check-prefix=NOREGION

// Named patterns become composites labelled onnxruntime.<pattern> (constants matched by
// is_constant are inside); arbitrary fusion unions whatever is supported up to the depth
// limit; the maximal supported region (any depth) comes last unless turned off.
// CHECK:      // candidates @main: 13
// CHECK-NEXT: onnxruntime onnxruntime.conv2d_bias_relu [%w, %c, %b, %a, %r] kind=out_ewise_fusable label=onnxruntime.conv2d_bias_relu
// CHECK-NEXT: onnxruntime onnxruntime.conv2d_bias [%w, %c, %b, %a] kind=out_ewise_fusable label=onnxruntime.conv2d_bias
// CHECK-NEXT: onnxruntime conv2d [%c] kind=out_ewise_fusable label=-
// CHECK-NEXT: onnxruntime add [%a] kind=broadcast label=-
// CHECK-NEXT: onnxruntime relu [%r] kind=elemwise label=-
// CHECK-NEXT: onnxruntime reduce_sum [%m] kind=comm_reduce label=-
// CHECK-NEXT: onnxruntime onnxruntime.conv2d_bias+relu [%w, %c, %b, %a, %r] kind=out_ewise_fusable label=onnxruntime.conv2d_bias
// CHECK-NEXT: onnxruntime conv2d+add [%c, %a] kind=out_ewise_fusable label=-
// CHECK-NEXT: onnxruntime add+relu [%a, %r] kind=broadcast label=-
// CHECK-NEXT: onnxruntime relu+reduce_sum [%r, %m] kind=comm_reduce label=-
// CHECK-NEXT: onnxruntime conv2d+add+relu [%c, %a, %r] kind=out_ewise_fusable label=-
// CHECK-NEXT: onnxruntime add+relu+reduce_sum [%a, %r, %m] kind=comm_reduce label=-
// CHECK-NEXT: onnxruntime max.region [%c, %a, %r, %m] kind=out_ewise_fusable label=-
// CHECK-NEXT: builtin.module

// NOREGION:     // candidates @main: 12
// NOREGION-NOT: max.region
// NOREGION:     builtin.module
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> {
  %w = collage.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = collage.constant dense<0.5> : tensor<2x1x1xf32>
  %a = collage.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = collage.relu %a : tensor<1x2x4x4xf32>
  %m = collage.reduce_sum %r {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  func.return %m : tensor<1x2x1x1xf32>
}

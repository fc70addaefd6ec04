// RUN: collage-opt %s --split-input-file -p 'collage-candidates{backends=tvm}' | filecheck %s

// FuseOps rules: conv (out_ewise_fusable) takes the bias add and relu (broadcast) but not
// the reduction; add and relu take the reduction (broadcast -> comm_reduce). The maximal
// region (any depth) is the kernel MaxCoalesce would make of them.
// CHECK:      // candidates @main: 10
// CHECK-NEXT: tvm conv2d [%c] kind=out_ewise_fusable label=-
// CHECK-NEXT: tvm add [%a] kind=broadcast label=-
// CHECK-NEXT: tvm relu [%r] kind=elemwise label=-
// CHECK-NEXT: tvm reduce_sum [%m] kind=comm_reduce label=-
// CHECK-NEXT: tvm conv2d+add [%c, %a] kind=out_ewise_fusable label=-
// CHECK-NEXT: tvm add+relu [%a, %r] kind=broadcast label=-
// CHECK-NEXT: tvm relu+reduce_sum [%r, %m] kind=comm_reduce label=-
// CHECK-NEXT: tvm conv2d+add+relu [%c, %a, %r] kind=out_ewise_fusable label=-
// CHECK-NEXT: tvm add+relu+reduce_sum [%a, %r, %m] kind=comm_reduce label=-
// CHECK-NEXT: tvm max.region [%c, %a, %r, %m] kind=out_ewise_fusable label=-
// CHECK-NEXT: builtin.module
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> {
  %w = collage.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = collage.constant dense<0.5> : tensor<2x1x1xf32>
  %a = collage.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = collage.relu %a : tensor<1x2x4x4xf32>
  %m = collage.reduce_sum %r {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  func.return %m : tensor<1x2x1x1xf32>
}

// -----

// An older upstream candidate (relu) still combines with a downstream one found later
// (tanh+add).
// CHECK:      // candidates @main: 6
// CHECK-NEXT: tvm relu [%a] kind=elemwise label=-
// CHECK-NEXT: tvm tanh [%b] kind=elemwise label=-
// CHECK-NEXT: tvm add [%s] kind=broadcast label=-
// CHECK-NEXT: tvm relu+add [%a, %s] kind=broadcast label=-
// CHECK-NEXT: tvm tanh+add [%b, %s] kind=broadcast label=-
// CHECK-NEXT: tvm relu+tanh+add [%a, %b, %s] kind=broadcast label=-
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = collage.relu %x : tensor<2x4xf32>
  %b = collage.tanh %x : tensor<2x4xf32>
  %s = collage.add %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %s : tensor<2x4xf32>
}

// -----

// Tuples: the concat's tuple joins its injective producers; the tuple alone goes to the host.
// The maximal region stops at the tuple, which is the host's, not tvm's.
// CHECK:      // candidates @main: 8
// CHECK-NEXT: tvm split [%s] kind=injective label=-
// CHECK-NEXT: tvm transpose [%a] kind=injective label=-
// CHECK-NEXT: tvm reshape [%e] kind=injective label=-
// CHECK-NEXT: tvm concat [%c] kind=injective label=-
// CHECK-NEXT: tvm transpose+reshape+tuple+concat [%a, %e, %t, %c] kind=tuple label=-
// CHECK-NEXT: tvm split+transpose+reshape+tuple+concat [%s, %a, %e, %t, %c] kind=tuple label=-
// CHECK-NEXT: tvm max.region [%s, %a, %e] kind=injective label=-
// CHECK-NEXT: host host.tuple [%t] kind=tuple label=-
func.func @main(%x: tensor<2x4xf32>) -> tensor<4x2xf32> {
  %s:2 = collage.split %x {axis = 0 : i64, sizes = array<i64: 1, 1>} : (tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  %a = collage.transpose %s#0 {perm = array<i64: 1, 0>} : tensor<1x4xf32> -> tensor<4x1xf32>
  %e = collage.reshape %s#1 : tensor<1x4xf32> -> tensor<4x1xf32>
  %t = collage.tuple %a, %e : (tensor<4x1xf32>, tensor<4x1xf32>) -> tuple<tensor<4x1xf32>, tensor<4x1xf32>>
  %c = collage.concat %t {axis = 1 : i64} : (tuple<tensor<4x1xf32>, tensor<4x1xf32>>) -> tensor<4x2xf32>
  func.return %c : tensor<4x2xf32>
}

// -----

// Without a depth limit the chain combines whole, and the maximal region, equal to that
// candidate, is that candidate (with a depth limit: tvm_max_depth.mlir).
// CHECK:      // candidates @chain: 6
// CHECK:      tvm relu+tanh+exp [%a, %b, %c] kind=elemwise label=-
func.func @chain(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = collage.relu %x : tensor<2x4xf32>
  %b = collage.tanh %a : tensor<2x4xf32>
  %c = collage.exp %b : tensor<2x4xf32>
  func.return %c : tensor<2x4xf32>
}

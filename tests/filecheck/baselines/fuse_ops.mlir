// collage-fuse-ops: TVM's FuseOps groups, each a tvm kernel.
// RUN: collage-opt %s --split-input-file -p collage-fuse-ops | filecheck %s

// Phase 0: conv2d fuses with its bias add and relu (the add reads an operand of its own
// shape, so the edge is element-wise); the pool fuses with the sigmoid after it; the
// transpose (injective) cannot join a group anchored by an out-ewise-fusable op.
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %r = collage.kernel "tvm"(%x, %w, %bias) {label = "conv2d_add_relu"}
// CHECK:         %s = collage.kernel "tvm"(%r) {label = "max_pool2d_sigmoid"}
// CHECK:         %t = collage.kernel "tvm"(%s) {label = "transpose"}
// CHECK:         func.return %t
func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<1x4x1x1xf32>) -> tensor<1x4x3x3xf32> {
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %b = collage.add %c, %bias : (tensor<1x4x6x6xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = collage.relu %b : tensor<1x4x6x6xf32>
  %p = collage.max_pool2d %r {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : tensor<1x4x6x6xf32> -> tensor<1x4x3x3xf32>
  %s = collage.sigmoid %p : tensor<1x4x3x3xf32>
  %t = collage.transpose %s {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xf32>
  func.return %t : tensor<1x4x3x3xf32>
}

// -----

// A diamond of element-wise ops fuses into the reduction that post-dominates it; the
// softmax (opaque) stays alone.
// CHECK-LABEL: func.func @diamond
// CHECK-NEXT:    %e = collage.kernel "tvm"(%x) {label = "exp_relu_neg_add_reduce_sum"}
// CHECK:         %f = collage.kernel "tvm"(%x, %e) {label = "sub"}
// CHECK:         %g = collage.kernel "tvm"(%f) {label = "softmax"}
func.func @diamond(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = collage.exp %x : tensor<2x4xf32>
  %b = collage.relu %a : tensor<2x4xf32>
  %c = collage.neg %a : tensor<2x4xf32>
  %d = collage.add %b, %c : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %e = collage.reduce_sum %d {axes = array<i64: 1>, keepdims = true} : tensor<2x4xf32> -> tensor<2x1xf32>
  %f = collage.sub %x, %e : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  %g = collage.softmax %f {axis = -1 : i64} : tensor<2x4xf32>
  func.return %g : tensor<2x4xf32>
}

// -----

// Phase 1 and 2: the tuple fuses into the concatenate (phase 1), then the reshape into
// that tuple (phase 2).
// CHECK-LABEL: func.func @tuple
// CHECK-NEXT:    %c = collage.kernel "tvm"(%x, %y) {label = "reshape_tuple_concat"}
func.func @tuple(%x: tensor<2x4xf32>, %y: tensor<8xf32>) -> tensor<16xf32> {
  %r = collage.reshape %x : tensor<2x4xf32> -> tensor<8xf32>
  %t = collage.tuple %r, %y : (tensor<8xf32>, tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>>
  %c = collage.concat %t {axis = 0 : i64} : (tuple<tensor<8xf32>, tensor<8xf32>>) -> tensor<16xf32>
  func.return %c : tensor<16xf32>
}

// -----

// A tuple with a second consumer has no post-dominator but the exit: it and its lone
// get_item stay on the host.
// CHECK-LABEL: func.func @host_tuple
// CHECK-NEXT:    %t = collage.tuple %x, %y
// CHECK-NEXT:    %c = collage.kernel "tvm"(%t) {label = "concat"}
// CHECK:         %g = collage.get_item %t
// CHECK-NEXT:    func.return %c, %g
func.func @host_tuple(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<16xf32>, tensor<8xf32>) {
  %t = collage.tuple %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tuple<tensor<8xf32>, tensor<8xf32>>
  %c = collage.concat %t {axis = 0 : i64} : (tuple<tensor<8xf32>, tensor<8xf32>>) -> tensor<16xf32>
  %g = collage.get_item %t {index = 1 : i64} : (tuple<tensor<8xf32>, tensor<8xf32>>) -> tensor<8xf32>
  func.return %c, %g : tensor<16xf32>, tensor<8xf32>
}

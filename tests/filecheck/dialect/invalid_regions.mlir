// RUN: collage-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Kernel and composite regions sit where the partitioner puts them: a kernel at the
// top level of a function, a composite inside a kernel (or in a kernel function); a
// kernel's estimated cost is not negative.

// kernel nested in a kernel
// CHECK:      %s = "collage.kernel"(%a)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: collage.kernel cannot be nested in a collage.kernel
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.kernel "tvm"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = collage.kernel "onnxruntime"(%a) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      %c = collage.relu %b : tensor<4xf32>
      collage.yield %c : tensor<4xf32>
    }
    collage.yield %s : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// kernel nested in a composite of a kernel
// CHECK:      %t = "collage.kernel"(%b)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: collage.kernel cannot be nested in a collage.composite
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.kernel "tvm"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %s = collage.composite "part"(%a) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%b: tensor<4xf32>):
      %t = collage.kernel "tvm"(%b) : (tensor<4xf32>) -> tensor<4xf32> {
      ^bb0(%c: tensor<4xf32>):
        %d = collage.relu %c : tensor<4xf32>
        collage.yield %d : tensor<4xf32>
      }
      collage.yield %t : tensor<4xf32>
    }
    collage.yield %s : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// kernel nested in an outlined kernel function
// CHECK:      %r = "collage.kernel"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: collage.kernel cannot be nested in the kernel function @collage_tvm_relu
func.func private @collage_tvm_relu(%x: tensor<4xf32>) -> tensor<4xf32> attributes {collage.backend = "tvm", collage.kernel} {
  %r = collage.kernel "tvm"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.relu %a : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// negative kernel cost
// CHECK:      %r = "collage.kernel"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: cost -5.0 is negative (seconds; NaN = unknown, inf = invalid)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.kernel "tvm"(%x) {cost = -5.0 : f64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.relu %a : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// composite beside kernels, at the top level of a partitioned function
// CHECK:      %s = "collage.composite"(%r)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: collage.composite must be inside a collage.kernel when its function holds kernels
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.kernel "tvm"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.relu %a : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  %s = collage.composite "neg"(%r) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.neg %a : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  func.return %s : tensor<4xf32>
}

// -----

// A cost of 0, NaN (unknown) or inf (invalid) is fine.
// CHECK:      func.func @f
// CHECK-NEXT:   %r = collage.kernel "tvm"(%x) {cost = 0.000000e+00 : f64}
// CHECK:        %s = collage.kernel "tvm"(%x) {cost = 0x7ff8000000000000 : f64}
// CHECK:        %t = collage.kernel "tvm"(%x) {cost = 0x7ff0000000000000 : f64}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = collage.kernel "tvm"(%x) {cost = 0.0 : f64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    collage.yield %a : tensor<4xf32>
  }
  %s = collage.kernel "tvm"(%x) {cost = 0x7FF8000000000000 : f64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    collage.yield %a : tensor<4xf32>
  }
  %t = collage.kernel "tvm"(%x) {cost = 0x7FF0000000000000 : f64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    collage.yield %a : tensor<4xf32>
  }
  func.return %r, %s, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// So is a composite in a function without kernels.
// CHECK:      func.func @kernel
// CHECK-NEXT:   %r = collage.composite "relu"(%x)
func.func @kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.composite "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.relu %a : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// kernel of a backend that is not registered
// CHECK:      %r = "collage.kernel"(%x)
// CHECK-NEXT: ^^^
// CHECK-NEXT: | Operation does not verify: collage.kernel names unknown backend 'cuda' (registered: iree, onnxruntime, openvino, test, tvm)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.kernel "cuda"(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = collage.relu %a : tensor<4xf32>
    collage.yield %c : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

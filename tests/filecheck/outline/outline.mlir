// collage-outline turns each kernel region into a call of a private function; stock xdsl-opt
// re-parses the result.
// RUN: collage-opt %s --split-input-file -p collage-outline | filecheck %s
// RUN: collage-opt %s --split-input-file -p collage-outline | xdsl-opt --split-input-file | filecheck %s

// One kernel: a private function with backend, cost and the kernel marker, called from main.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %r = func.call @collage_tvm_relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    func.return %r
// CHECK:       func.func private @collage_tvm_relu(%a: tensor<4xf32>) -> tensor<4xf32> attributes {collage.backend = "tvm", collage.cost = 1.000000e-06 : f64, collage.kernel} {
// CHECK-NEXT:    %b = collage.relu %a
// CHECK-NEXT:    func.return %b
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.kernel "tvm"(%x) {label = "relu", cost = 1.0e-06 : f64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.relu %a : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}

// -----

// Structurally equal kernels of one backend share a function; another backend gets its own.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %r = func.call @collage_tvm_relu(%x)
// CHECK-NEXT:    %s = func.call @collage_tvm_relu(%r)
// CHECK-NEXT:    %t = func.call @collage_onnxruntime_relu(%s)
// CHECK:       func.func private @collage_tvm_relu(
// CHECK-NOT:   func.func private @collage_tvm_other
// CHECK:       func.func private @collage_onnxruntime_relu(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.kernel "tvm"(%x) {label = "relu"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.relu %a : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  %s = collage.kernel "tvm"(%r) {label = "other"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.relu %a : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  %t = collage.kernel "onnxruntime"(%s) {label = "relu"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.relu %a : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  func.return %t : tensor<4xf32>
}

// -----

// Kernels differing only in an attribute or a constant stay apart; an unlabelled kernel is
// named by its index, a clashing name gets a suffix.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %r = func.call @collage_tvm_add(%x)
// CHECK-NEXT:    %s = func.call @collage_tvm_add_1(%r)
// CHECK-NEXT:    %t = func.call @collage_tvm_2(%s)
// CHECK-NEXT:    %u = func.call @collage_tvm_3(%t)
// CHECK:       func.func private @collage_tvm_add(
// CHECK:         dense<1.000000e+00>
// CHECK:       func.func private @collage_tvm_add_1(
// CHECK:         dense<2.000000e+00>
// CHECK:       func.func private @collage_tvm_2(
// CHECK:       func.func private @collage_tvm_3(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = collage.kernel "tvm"(%x) {label = "add"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = collage.constant dense<1.0> : tensor<4xf32>
    %b = collage.add %a, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  %s = collage.kernel "tvm"(%r) {label = "add"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %c = collage.constant dense<2.0> : tensor<4xf32>
    %b = collage.add %a, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  %t = collage.kernel "tvm"(%s) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.clip %a {min = 0.0 : f32} : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  %u = collage.kernel "tvm"(%t) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = collage.clip %a {min = 1.0 : f32} : tensor<4xf32>
    collage.yield %b : tensor<4xf32>
  }
  func.return %u : tensor<4xf32>
}

// -----

// Several exits become several results; a nested composite stays inside the kernel
// function; an unknown (NaN) cost prints and re-parses.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %r, %s = func.call @collage_onnxruntime_add_relu(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK:       func.func private @collage_onnxruntime_add_relu(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) attributes {collage.backend = "onnxruntime", collage.cost = 0x7ff8000000000000 : f64, collage.kernel} {
// CHECK-NEXT:    %c = collage.add %a, %b
// CHECK-NEXT:    %d = collage.composite "relu"(%c)
// CHECK:           collage.yield %f
// CHECK:         func.return %c, %d
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r, %s = collage.kernel "onnxruntime"(%x, %y) {label = "add_relu", cost = 0x7FF8000000000000 : f64} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %c = collage.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %d = collage.composite "relu"(%c) : (tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%e: tensor<4xf32>):
      %f = collage.relu %e : tensor<4xf32>
      collage.yield %f : tensor<4xf32>
    }
    collage.yield %c, %d : tensor<4xf32>, tensor<4xf32>
  }
  func.return %r, %s : tensor<4xf32>, tensor<4xf32>
}

// Greedy BYOC (collage-partition-for): the largest convex regions of supported ops go to
// the backend, the rest is fused for tvm; with min-region-ops=2, regions below two ops go
// to tvm as well.
// RUN: collage-opt %s -p 'collage-partition-for{backend=test backend-options="test: ops=relu,add"}' | filecheck %s
// RUN: collage-opt %s -p 'collage-partition-for{backend=test backend-options="test: ops=relu,add" min-region-ops=2}' | filecheck %s --check-prefix=MIN2

// A region cannot swallow the add after an unsupported sigmoid (the path through it would
// leave and re-enter), so the relu and each add are separate regions.
// CHECK-LABEL: func.func @residual
// CHECK-NEXT:    %a = collage.kernel "test"(%x) {label = "relu"}
// CHECK:         %s = collage.kernel "tvm"(%a) {label = "sigmoid"}
// CHECK:         %c = collage.kernel "test"(%a, %s) {label = "add_relu"}
// CHECK:         %e = collage.kernel "tvm"(%c) {label = "sigmoid_exp"}
// CHECK:         %d = collage.kernel "test"(%c, %e) {label = "add"}
// CHECK:         func.return %d

// MIN2-LABEL: func.func @residual
// MIN2-NEXT:    %a = collage.kernel "tvm"(%x) {label = "relu"}
// MIN2:         %c = collage.kernel "test"(%a, %s) {label = "add_relu"}
// MIN2:         %d = collage.kernel "tvm"(%c) {label = "sigmoid_exp_add"}
func.func @residual(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %s = collage.sigmoid %a : tensor<4xf32>
  %b = collage.add %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %u = collage.sigmoid %c : tensor<4xf32>
  %e = collage.exp %u : tensor<4xf32>
  %d = collage.add %c, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// Boundary-aware costs: `transitions=fixed:SECONDS` charges every tensor handed between
// kernels of different backends. relu -> sigmoid -> relu, where only tvm runs sigmoid and
// the test backend runs relu at half tvm's cost: without crossings the relus go to the
// test backend (3 kernels, 2 crossings); a crossing dearer than what they save keeps the
// whole chain on tvm in one kernel (a cheap crossing: transitions_explain.mlir).
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:2,test:1"}' | filecheck %s --check-prefix=FREE
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:2,test:1" transitions="fixed:1"}' | filecheck %s --check-prefix=DEAR

// FREE:      collage.kernel "test"(%x)
// FREE:      collage.kernel "tvm"(%a)
// FREE:      collage.kernel "test"(%b)

// DEAR:      %c = collage.kernel "tvm"(%x) {label = "relu_sigmoid", cost = 5.420000e+00
// DEAR-NOT:  collage.kernel
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

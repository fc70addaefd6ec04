// Boundary-aware costs: `transitions=fixed:SECONDS` charges every tensor handed between
// kernels of different backends. relu -> sigmoid -> relu, where only tvm runs sigmoid and
// the test backend runs relu at half tvm's cost: without crossings the relus go to the
// test backend (3 kernels, 2 crossings); a crossing dearer than what they save keeps the
// whole chain on tvm in one kernel; the explain table shows what the crossings cost.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:2,test:1"}' | filecheck %s --check-prefix=FREE
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:2,test:1" transitions="fixed:0.25" explain-table="%t.txt" explain="%t.json"}' | filecheck %s --check-prefix=CHEAP
// RUN: filecheck %s --check-prefix=CHEAP-TABLE < %t.txt
// RUN: filecheck %s --check-prefix=CHEAP-JSON < %t.json
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:2,test:1" transitions="fixed:1"}' | filecheck %s --check-prefix=DEAR
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,test transitions="fixed:-1"}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,test transitions=measured}' 2>&1 | filecheck %s --check-prefix=NOHOOK

func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// FREE:      collage.kernel "test"(%x)
// FREE:      collage.kernel "tvm"(%a)
// FREE:      collage.kernel "test"(%b)

// CHEAP:      collage.kernel "test"(%x)
// CHEAP:      collage.kernel "tvm"(%a)
// CHEAP:      collage.kernel "test"(%b)
// CHEAP-TABLE: @chain: 3 kernels, total 4.5 s
// CHEAP-TABLE-NEXT: estimated run 4.5 s: kernels 4 s, launches 0 s, crossings 500 ms, base 0 s
// CHEAP-JSON: "transitions": {
// CHEAP-JSON-NEXT: "fixed": 0.25

// DEAR:      %c = collage.kernel "tvm"(%x) {label = "relu_sigmoid", cost = 5.420000e+00
// DEAR-NOT:  collage.kernel

// BAD: transitions: expected none, measured, auto or fixed:SECONDS (SECONDS >= 0), got 'fixed:-1'
// NOHOOK: transitions=measured runs kernels on every backend; 'test' has no codegen hook

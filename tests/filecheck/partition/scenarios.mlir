// Collage partitioning with the mock estimator and the toy `test` backend: each case shows
// which kernels the cheapest cover picks and how they become `collage.kernel` regions.

// A single op, won by the cheaper side; on an equal cost the first backend keeps it (a
// strictly cheaper path replaces the best one, an equal one does not).
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:2,test:1"}' | filecheck %s --check-prefix=SINGLE-TEST
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:1,test:2"}' | filecheck %s --check-prefix=SINGLE-TVM
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=TIE-TVM
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=test,tvm backend-options="test: ops=relu" mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=TIE-TEST

func.func @single(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// SINGLE-TEST-LABEL: func.func @single
// SINGLE-TEST-NEXT:    %a = collage.kernel "test"(%x) {label = "relu", cost = 1.000000e+00 : f64} : (tensor<4xf32>) -> tensor<4xf32> {
// SINGLE-TEST-NEXT:    ^bb0(%x_1: tensor<4xf32>):
// SINGLE-TEST-NEXT:      %a_1 = collage.relu %x_1 : tensor<4xf32>
// SINGLE-TEST-NEXT:      collage.yield %a_1 : tensor<4xf32>
// SINGLE-TEST-NEXT:    }
// SINGLE-TEST-NEXT:    func.return %a : tensor<4xf32>

// SINGLE-TVM-LABEL: func.func @single
// SINGLE-TVM-NEXT:    %a = collage.kernel "tvm"(%x) {label = "relu", cost = 1.000000e+00 : f64}

// TIE-TVM-LABEL: func.func @single
// TIE-TVM-NEXT:    collage.kernel "tvm"(%x)

// TIE-TEST-LABEL: func.func @single
// TIE-TEST-NEXT:    collage.kernel "test"(%x)

// -----

// A diamond: the test backend's max depth decides between one fused kernel and singletons.
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,add" byoc-max-regions=false tvm-max-regions=false byoc-max-depth=3 mock-costs="tvm:1.5,test:1"}' | filecheck %s --check-prefix=DIAMOND-FUSED
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,add" byoc-max-regions=false tvm-max-regions=false byoc-max-depth=1 mock-costs="tvm:1.5,test:1"}' | filecheck %s --check-prefix=DIAMOND-SINGLE

func.func @diamond(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %a : tensor<4xf32>
  %d = collage.add %b, %c : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// DIAMOND-FUSED-LABEL: func.func @diamond
// DIAMOND-FUSED-NEXT:    %d = collage.kernel "test"(%x) {label = "relu_add", cost = 3.439000e+00 : f64}
// DIAMOND-FUSED-COUNT-3:   collage.relu
// DIAMOND-FUSED-NEXT:      collage.add
// DIAMOND-FUSED-NEXT:      collage.yield
// DIAMOND-FUSED-NEXT:    }
// DIAMOND-FUSED-NEXT:    func.return %d

// DIAMOND-SINGLE-LABEL: func.func @diamond
// DIAMOND-SINGLE:         %a = collage.kernel "test"(%x) {label = "relu", cost = 1.000000e+00 : f64}
// DIAMOND-SINGLE:         %b = collage.kernel "test"(%a) {label = "relu"
// DIAMOND-SINGLE:         %c = collage.kernel "test"(%a) {label = "relu"
// DIAMOND-SINGLE:         %d = collage.kernel "test"(%b, %c) {label = "add"

// -----

// A relu chain: the tvm and test max depths decide who fuses it; equal per-op costs.
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false tvm-max-depth=4 byoc-max-depth=2 mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=CHAIN-TVM
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false tvm-max-depth=1 byoc-max-depth=4 mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=CHAIN-TEST
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false tvm-max-depth=2 byoc-max-depth=2 mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=CHAIN-HALVES

func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %d = collage.relu %c : tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// CHAIN-TVM-LABEL: func.func @chain
// CHAIN-TVM-NEXT:    %d = collage.kernel "tvm"(%x) {label = "relu", cost = 3.439000e+00 : f64}
// CHAIN-TVM-NOT:     collage.kernel
// CHAIN-TVM:         func.return %d

// CHAIN-TEST-LABEL: func.func @chain
// CHAIN-TEST-NEXT:    %d = collage.kernel "test"(%x) {label = "relu", cost = 3.439000e+00 : f64}
// CHAIN-TEST-NOT:     collage.kernel
// CHAIN-TEST:         func.return %d

// Two kernels of depth 2; MaxCoalesce keeps them apart (the merge would exceed depth 2).
// CHAIN-HALVES-LABEL: func.func @chain
// CHAIN-HALVES-NEXT:    %b = collage.kernel "tvm"(%x) {label = "relu", cost = 1.900000e+00 : f64}
// CHAIN-HALVES:         %d = collage.kernel "tvm"(%b) {label = "relu", cost = 1.900000e+00 : f64}

// -----

// Five ops fused on the pricier tvm beat five singletons on the cheaper, non-fusing test
// backend (5 x 0.85 > 1 + 0.9 + 0.81 + 0.729 + 0.6561); at 0.8 per op the singletons win.
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu fusion=none" byoc-max-regions=false tvm-max-regions=false mock-costs="tvm:1,test:0.85"}' | filecheck %s --check-prefix=FIVE-FUSED
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu fusion=none" byoc-max-regions=false tvm-max-regions=false mock-costs="tvm:1,test:0.8"}' | filecheck %s --check-prefix=FIVE-SINGLE

func.func @five(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %d = collage.relu %c : tensor<4xf32>
  %e = collage.relu %d : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// FIVE-FUSED-LABEL: func.func @five
// FIVE-FUSED-NEXT:    %e = collage.kernel "tvm"(%x) {label = "relu", cost = 4.095100e+00 : f64}
// FIVE-FUSED-COUNT-5:   collage.relu
// FIVE-FUSED-NOT:     collage.kernel
// FIVE-FUSED:         func.return %e

// FIVE-SINGLE-LABEL: func.func @five
// FIVE-SINGLE-COUNT-5: collage.kernel "test"({{%[a-z]}}) {label = "relu", cost = 8.000000e-01 : f64}

// -----

// Output tuple: the host builds it outside the kernel, which has two results.
// An intermediate tuple feeding concatenate stays on the host too.
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,add,concat" mock-costs="tvm:2,test:1"}' | filecheck %s --check-prefix=TUPLE

func.func @out_tuple(%x: tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.add %a, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %t = collage.tuple %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  func.return %t : tuple<tensor<4xf32>, tensor<4xf32>>
}

// TUPLE-LABEL: func.func @out_tuple
// TUPLE-NEXT:    %a, %b = collage.kernel "test"(%x) {label = "relu_add", cost = 1.900000e+00 : f64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// TUPLE:           collage.yield %a_1, %b_1 : tensor<4xf32>, tensor<4xf32>
// TUPLE-NEXT:    }
// TUPLE-NEXT:    %t = collage.tuple %a, %b
// TUPLE-NEXT:    func.return %t

func.func @mid_tuple(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<8xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %y : tensor<4xf32>
  %t = collage.tuple %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<4xf32>, tensor<4xf32>>
  %c = collage.concat %t {axis = 0 : i64} : (tuple<tensor<4xf32>, tensor<4xf32>>) -> tensor<8xf32>
  func.return %c : tensor<8xf32>
}

// TUPLE-LABEL: func.func @mid_tuple
// TUPLE:         %a = collage.kernel "test"(%x)
// TUPLE:         %b = collage.kernel "test"(%y)
// TUPLE:         %t = collage.tuple %a, %b
// TUPLE-NEXT:    %c = collage.kernel "test"(%t) {label = "concat", cost = 1.000000e+00 : f64} : (tuple<tensor<4xf32>, tensor<4xf32>>) -> tensor<8xf32> {
// TUPLE-NEXT:    ^bb0(%t_1: tuple<tensor<4xf32>, tensor<4xf32>>):
// TUPLE-NEXT:      %c_1 = collage.concat %t_1

// -----

// A double residual: sigmoid only runs on tvm, so a relu and the add after its sigmoid
// cannot share a test kernel (the path through the tvm sigmoid would leave and re-enter);
// MaxCoalesce keeps them apart too.
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,add" mock-costs="tvm:2,test:1"}' | filecheck %s --check-prefix=RESIDUAL

func.func @residual(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %s = collage.sigmoid %a : tensor<4xf32>
  %b = collage.add %a, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %u = collage.sigmoid %c : tensor<4xf32>
  %d = collage.add %c, %u : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// RESIDUAL-LABEL: func.func @residual
// RESIDUAL-NEXT:    %a = collage.kernel "test"(%x) {label = "relu"
// RESIDUAL:         %s = collage.kernel "tvm"(%a) {label = "sigmoid"
// RESIDUAL:         %c = collage.kernel "test"(%a, %s) {label = "add_relu"
// RESIDUAL:         %u = collage.kernel "tvm"(%c) {label = "sigmoid"
// RESIDUAL:         %d = collage.kernel "test"(%c, %u) {label = "add"
// RESIDUAL:         func.return %d

// -----

// MaxCoalesce: with one exit per candidate the fan-out can only be covered by three test
// singletons; afterwards the touching kernels merge into one of two results, costed as one
// kernel (2.71 = 1 + 0.9 + 0.81, less than the 3 its parts cost apart).
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false mock-costs="tvm:2,test:1"}' | filecheck %s --check-prefix=COALESCE
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" byoc-max-regions=false tvm-max-regions=false mock-costs="tvm:2,test:1" coalesce=false}' | filecheck %s --check-prefix=APART

func.func @fan_out(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %a : tensor<4xf32>
  func.return %b, %c : tensor<4xf32>, tensor<4xf32>
}

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

// -----

// tvm's maximal region: the search prices the one kernel MaxCoalesce would make of tvm's
// kernels, not its parts with a launch each. With single-op tvm candidates and a launch
// penalty of 0.5, four tvm kernels (4 x 1.5) lose to four test ones (4 x 1.3); the region
// (1 + 0.9 + 0.81 + 0.729 = 3.439, plus one launch) beats both.
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu fusion=none" byoc-max-regions=false tvm-max-depth=1 launch-penalty=0.5 mock-costs="tvm:1,test:0.8"}' | filecheck %s --check-prefix=REGION
// RUN: collage-opt %s --split-input-file -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu fusion=none" byoc-max-regions=false tvm-max-depth=1 tvm-max-regions=false launch-penalty=0.5 mock-costs="tvm:1,test:0.8"}' | filecheck %s --check-prefix=NO-REGION

func.func @four(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.relu %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %d = collage.relu %c : tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// REGION-LABEL: func.func @four
// REGION-NEXT:    %d = collage.kernel "tvm"(%x) {label = "relu", cost = 3.439000e+00 : f64}
// REGION-COUNT-4:   collage.relu
// REGION-NOT:     collage.kernel
// REGION:         func.return %d

// NO-REGION-LABEL: func.func @four
// NO-REGION-COUNT-4: collage.kernel "test"({{%[a-z]}}) {label = "relu", cost = 8.000000e-01 : f64}
// NO-REGION-NOT:     collage.kernel

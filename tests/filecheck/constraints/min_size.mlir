// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,sigmoid" mock-costs="tvm:2,test:1"}' | filecheck %s --check-prefix=FREE
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,sigmoid" mock-costs="tvm:2,test:1" min-kernel-ops=3}' | filecheck %s --check-prefix=MIN3
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu,sigmoid" mock-costs="tvm:2,test:1" min-kernel-seconds=2.5}' | filecheck %s --check-prefix=MIN3

// The cheaper test backend takes both two-op runs; with a minimum kernel of 3 ops (or of
// 2.5 s: a two-op test kernel is estimated below it), no test kernel is offered for them.
// FREE-LABEL: func.func @main
// FREE:         collage.kernel "test"(%x) {label = "relu_sigmoid"
// FREE:         collage.kernel "tvm"
// FREE:         collage.kernel "test"
// MIN3-LABEL: func.func @main
// MIN3-NOT:     collage.kernel "test"
// MIN3:         func.return
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.tanh %b : tensor<4xf32>
  %d = collage.relu %c : tensor<4xf32>
  %e = collage.sigmoid %d : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// On an equal cost the first backend in `backends` keeps the op: a strictly cheaper
// path replaces the best one, an equal one does not.
// RUN: collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=TIE-TVM
// RUN: collage-opt %s -p 'collage-partition{backends=test,tvm backend-options="test: ops=relu" mock-costs="tvm:1,test:1"}' | filecheck %s --check-prefix=TIE-TEST

// TIE-TVM-LABEL: func.func @single
// TIE-TVM-NEXT:    collage.kernel "tvm"(%x)

// TIE-TEST-LABEL: func.func @single
// TIE-TEST-NEXT:    collage.kernel "test"(%x)
func.func @single(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// A hand-edited plan that is not a valid partition: every problem, by node name.
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,test backend-options="test: ops=relu" mock-costs="tvm:1,test:1" plan-file="%S/inputs/edited_plan.json"}' 2>&1 | filecheck %s
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm plan-file="%S/inputs/missing.json"}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm plan-file="%s"}' 2>&1 | filecheck %s --check-prefix=NOTJSON

// CHECK:      error: {{.*}}edited_plan.json: @main is not a valid partition:
// CHECK-NEXT:   node 'e' (relu) is not an op of the function
// CHECK-NEXT:   node 'a' (relu) is placed twice
// CHECK-NEXT:   node 'y' (relu): the node is a sigmoid
// CHECK-NEXT:   kernel 1 mixes backends test and tvm (node 's' (add))
// CHECK-NEXT:   node 'd' (relu) is not placed
// CHECK-NEXT:   node 'y' (sigmoid) is not placed
// CHECK-NEXT:   node 's' (add) is not placed
// CHECK-NEXT:   kernel 1: test cannot run node 'b' (sigmoid) (unsupported, or the constraints forbid it)
// CHECK-NEXT:   kernel 2: backend 'openvino' is not enabled (enabled: tvm, test)
// CHECK-NEXT:   kernel 4 (tvm) is not a kernel it can run: a path leaves it and re-enters at nodes {{.*}}
// MISSING: error: {{.*}}missing.json: cannot read the plan: No such file or directory
// NOTJSON: error: {{.*}}invalid.mlir: not JSON: Expecting value: line 1 column 1 (char 0)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  %d = collage.relu %c : tensor<4xf32>
  %x2 = collage.relu %x : tensor<4xf32>
  %y = collage.sigmoid %x2 : tensor<4xf32>
  %y2 = collage.relu %y : tensor<4xf32>
  %s = collage.add %d, %y2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

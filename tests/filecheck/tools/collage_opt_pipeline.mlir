// xDSLOptMain's pipeline flags work with our passes: -p with options, several passes,
// --print-between-passes and --time-passes; --version names collage-xdsl.
// RUN: collage-opt %s -p 'collage-fuse-ops{max_fused_ops=1},collage-outline' --print-between-passes --time-passes | filecheck %s
// RUN: collage-opt --version | filecheck %s --check-prefix=VERSION

// VERSION: collage-opt {{[0-9]+\.[0-9]+\.[0-9]+}} (xDSL 0.74.0)

// CHECK:      Pass collage-fuse-ops took {{.*}} seconds
// CHECK-NEXT: IR after collage-fuse-ops:
// CHECK:        collage.kernel "tvm"(%x) {label = "relu"}
// CHECK:        collage.kernel "tvm"(%{{.*}}) {label = "exp"}
// CHECK:      Pass collage-outline took {{.*}} seconds
// CHECK:      func.func @main
// CHECK-NOT:  collage.kernel
// CHECK:      func.call
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = collage.relu %x : tensor<2x3xf32>
  %b = collage.exp %a : tensor<2x3xf32>
  func.return %b : tensor<2x3xf32>
}

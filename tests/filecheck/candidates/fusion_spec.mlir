// Candidates from a fusion-spec file (`fusion-spec=FILE`): extend, replace, mistakes, and a
// partition that follows the file.
// RUN: collage-opt %s -p 'collage-candidates{backends=tvm,test backend-options="test: ops=add,relu,reduce_sum fusion=tvm" fusion-spec="%S/inputs/fusion_spec_extend.toml" byoc-max-regions=false}' | filecheck %s --check-prefix=EXTEND
// RUN: collage-opt %s -p 'collage-candidates{backends=tvm,test backend-options="test: ops=add,relu,reduce_sum fusion=tvm" fusion-spec="%S/inputs/fusion_spec_replace.toml" byoc-max-regions=false}' | filecheck %s --check-prefix=REPLACE
// RUN: collage-opt %s -p 'collage-partition{backends=tvm mock-costs="tvm:1" fusion-spec="%S/inputs/fusion_spec_unfused.toml"},collage-outline' | filecheck %s --check-prefix=UNFUSED
// RUN: printf '[test]\nfuse = "tvm"\n' > %t.key.toml
// RUN: not collage-opt %s -p 'collage-candidates{backends=test fusion-spec="%t.key.toml"}' 2>&1 | filecheck %s --check-prefix=KEY
// RUN: printf '[test]\npatterns = { cr = "conv2d+frob" }\n' > %t.pattern.toml
// RUN: not collage-opt %s -p 'collage-candidates{backends=test fusion-spec="%t.pattern.toml"}' 2>&1 | filecheck %s --check-prefix=PATTERN
// RUN: printf '[tensorrt]\nops = ["relu"]\n' > %t.backend.toml
// RUN: not collage-opt %s -p 'collage-candidates{backends=tvm fusion-spec="%t.backend.toml"}' 2>&1 | filecheck %s --check-prefix=BACKEND
// RUN: not collage-opt %s -p 'collage-candidates{backends=tvm fusion-spec="%t.missing.toml"}' 2>&1 | filecheck %s --check-prefix=MISSING

// The declared add and reduce_sum stay, conv2d and a composite join, relu is excluded.
// EXTEND:      // candidates @main: 15
// EXTEND:      test test.conv_bias [%c, %a] kind=out_ewise_fusable label=test.conv_bias
// EXTEND-NEXT: test conv2d [%c] kind=out_ewise_fusable label=-
// EXTEND-NEXT: test add [%a] kind=broadcast label=-
// EXTEND-NEXT: test reduce_sum [%m] kind=comm_reduce label=-
// EXTEND-NEXT: test conv2d+add [%c, %a] kind=out_ewise_fusable label=-
// EXTEND-NEXT: builtin.module

// Only the file's ops (relu by kind, conv2d at group 1), unfused.
// REPLACE:      // candidates @main: 13
// REPLACE:      test conv2d [%c] kind=out_ewise_fusable label=-
// REPLACE-NEXT: test relu [%r] kind=elemwise label=-
// REPLACE-NEXT: test reduce_sum [%m] kind=comm_reduce label=-
// REPLACE-NEXT: builtin.module

// TVM told not to fuse: four kernels of one op each (unfused it fuses all four).
// UNFUSED-COUNT-4: func.call @collage_tvm_
// UNFUSED-NOT:     func.call
// UNFUSED:         func.func private @collage_tvm_conv2d(
// UNFUSED-NEXT:      collage.constant
// UNFUSED-NEXT:      collage.conv2d
// UNFUSED-NEXT:      func.return

// KEY: fusion spec {{.*}}key.toml: [test] fuse: unknown key (keys: mode, ops, kinds, exclude, where, conditions, patterns, fusion, max_depth)
// PATTERN: fusion spec {{.*}}pattern.toml: [test] patterns.cr: unknown op 'frob' (known:
// BACKEND: fusion spec {{.*}}backend.toml: [tensorrt]: unknown backend 'tensorrt' (available: iree, onnxruntime, openvino, test, tvm)
// MISSING: fusion spec {{.*}}missing.toml: cannot read it: No such file or directory
func.func @main(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> {
  %w = collage.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c = collage.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = collage.constant dense<0.5> : tensor<2x1x1xf32>
  %a = collage.add %c, %b : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = collage.relu %a : tensor<1x2x4x4xf32>
  %m = collage.reduce_sum %r {axes = array<i64: 2, 3>, keepdims = true} : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  func.return %m : tensor<1x2x1x1xf32>
}

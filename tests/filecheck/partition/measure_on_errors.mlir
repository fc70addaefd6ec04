// measure-on takes its value quoted; a bad one, or a cluster with the mock estimator, is
// one error line.
// RUN: not collage-opt %s -p 'collage-partition{estimator=measured measure-on="ray:nowhere"}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not collage-opt %s -p 'collage-partition{measure-on="ray://head:10001"}' 2>&1 | filecheck %s --check-prefix=MOCK

// BAD: error: {{.*}}errors.mlir: collage-partition: measure-on ray:nowhere: expected local, ray:auto or ray://HOST:PORT
// MOCK: error: {{.*}}errors.mlir: collage-partition: measure-on ray://head:10001: measures kernels; it needs estimator=measured
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

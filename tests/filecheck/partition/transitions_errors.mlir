// A bad transitions option ends with one error line: a negative fixed price, or measured
// crossings with a backend that cannot run kernels.
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,test transitions="fixed:-1"}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm,test transitions=measured}' 2>&1 | filecheck %s --check-prefix=NOHOOK

// BAD: transitions: expected none, measured, auto or fixed:SECONDS (SECONDS >= 0), got 'fixed:-1'
// NOHOOK: transitions=measured runs kernels on every backend; 'test' has no codegen hook
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  %b = collage.sigmoid %a : tensor<4xf32>
  %c = collage.relu %b : tensor<4xf32>
  func.return %c : tensor<4xf32>
}

// A bad budget ends with one error line naming the option and the reason; budget=0 (off)
// still checks the other options.
// RUN: not collage-opt %s -p 'collage-refine{budget=-1}' 2>&1 | filecheck %s --check-prefix=BUDGET
// RUN: not collage-opt %s -p 'collage-refine{budget=ten}' 2>&1 | filecheck %s --check-prefix=PARSE
// RUN: not collage-opt %s -p 'collage-refine{budget=0 min-gain=1}' 2>&1 | filecheck %s --check-prefix=GAIN

// BUDGET: error: {{.*}}errors.mlir: collage-refine: budget must be auto or a finite number of seconds >= 0, got -1.0
// PARSE: error: {{.*}}errors.mlir: collage-refine: budget must be auto or a finite number of seconds >= 0, got 'ten'
// GAIN: error: {{.*}}errors.mlir: collage-refine: min-gain must be in [0, 1), got 1.0
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = collage.relu %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

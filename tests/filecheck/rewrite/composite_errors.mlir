// A bad patterns option, or composites asked for after partitioning, is one error line
// naming the option, the entry or the op.
// RUN: not collage-opt %s -p 'collage-composite-patterns{patterns="fma"}' 2>&1 | filecheck %s --check-prefix=MALFORMED
// RUN: not collage-opt %s -p 'collage-composite-patterns{patterns="fma=mul+frobnicate"}' 2>&1 | filecheck %s --check-prefix=BADOP
// RUN: not collage-opt %s -p 'collage-composite-patterns' 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not collage-opt %s -p 'collage-composite-patterns{patterns="fma=mul+add;fma=add+relu"}' 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not collage-opt %s -p 'collage-partition{backends=tvm},collage-composite-patterns{patterns="fma=mul+add"}' 2>&1 | filecheck %s --check-prefix=AFTER

// MALFORMED: error: {{.*}}: collage-composite-patterns: patterns: 'fma' is not label=op+op+... (a label of letters, digits, _ and .)
// MALFORMED-NOT: Traceback
// BADOP: error: {{.*}}: collage-composite-patterns: patterns: pattern 'fma' names unknown op 'frobnicate'
// EMPTY: error: {{.*}}: collage-composite-patterns: patterns is empty; give label=op+op;... (e.g. fma=mul+add)
// TWICE: error: {{.*}}: collage-composite-patterns: patterns: label 'fma' is given twice
// AFTER: error: {{.*}}: collage-composite-patterns: @main holds collage.kernel regions; form composites before partitioning
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = collage.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = collage.add %m, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

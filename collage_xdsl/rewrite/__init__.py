"""Graph rewrites before partitioning, one module per rewrite:

- `collage_xdsl.rewrite.batch_norm`: inference batch norms folded into the convolution or
  matmul (and bias add) before them;
- `collage_xdsl.rewrite.constants`: ops on constants evaluated, chains of constant
  Mul / Add folded into each other and into convolution and matmul weights;
- `collage_xdsl.rewrite.composites`: user-named op chains wrapped in `collage.composite`
  regions (primitive functions), which partitioning keeps whole.
"""

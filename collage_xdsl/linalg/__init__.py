"""collage ops lowered to upstream MLIR dialects on tensors (`collage-lower-linalg`)."""

from collage_xdsl.linalg.lower import (
    LoweringError,
    LoweringReport,
    lower_to_linalg,
    lowered_op_names,
    mlir_text,
)

__all__ = ["LoweringError", "LoweringReport", "lower_to_linalg", "lowered_op_names",
           "mlir_text"]

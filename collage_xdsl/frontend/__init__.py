"""Model frontends: ONNX -> the `collage` dialect."""

from collage_xdsl.frontend.context import FrontendError
from collage_xdsl.frontend.onnx_import import import_onnx, parse_input_shapes, read_onnx

__all__ = ["FrontendError", "import_onnx", "parse_input_shapes", "read_onnx"]

"""Model frontends: ONNX -> the `collage` dialect."""

from collage_xdsl.frontend.onnx_import import FrontendError, import_onnx

__all__ = ["FrontendError", "import_onnx"]

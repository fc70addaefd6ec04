"""The OpenVINO hook: kernel -> ONNX model (in memory) -> model compiled for the CPU.

One `openvino.Core` serves the process. Inference precision is forced to f32 (the
CPU plugin's default here is bf16, which would make results incomparable): an f16
kernel converts its inputs to f32, computes in f32 and rounds its outputs to f16;
threads and streams follow `ThreadPolicy`. A kernel whose weights exceed protobuf's 2 GB is
read from a temporary folder instead, its weights in an external-data file beside it.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import onnx
import openvino as ov
from xdsl.dialects.func import FuncOp

from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.backends.onnx_export import detach_initializers, export_onnx, too_large
from collage_xdsl.backends.signature import Signature
from collage_xdsl.backends.threads import ThreadPolicy

VERSION = ov.get_version()


@cache
def core() -> ov.Core:
    """The process's OpenVINO runtime core."""
    return ov.Core()


def read_model(model: onnx.ModelProto) -> ov.Model:
    """`model` read by OpenVINO's ONNX frontend: from memory, or (over protobuf's 2 GB) from
    a temporary folder holding the model and its weights as external data."""
    if not too_large(model):
        return core().read_model(model.SerializeToString(), b"")
    with tempfile.TemporaryDirectory(prefix="collage-openvino-") as folder:
        weights = detach_initializers(model, "weights.bin")
        with open(Path(folder) / "weights.bin", "wb") as f:
            for array in weights.values():
                f.write(np.ascontiguousarray(array).tobytes())
        path = Path(folder) / "kernel.onnx"
        path.write_bytes(model.SerializeToString())
        return core().read_model(str(path))


def _reason(e: Exception) -> str:
    """OpenVINO's message without its source locations and check banners, on one line."""
    noise = ("Exception from ", "Check '", "Summary:")
    lines = [ln.strip() for ln in str(e).splitlines()]
    return " ".join(ln for ln in lines if ln and not ln.startswith(noise)) or type(e).__name__


class OpenVinoKernel:
    """A kernel compiled by OpenVINO's CPU plugin, run through one infer request."""

    backend = "openvino"
    version = VERSION

    def __init__(self, func: FuncOp, policy: ThreadPolicy):
        self.signature = Signature.of(func, self.backend)
        model = export_onnx(func, self.backend)
        try:
            self.compiled: ov.CompiledModel | None = core().compile_model(
                read_model(model), "CPU",
                policy.openvino_config(),
            )
        except RuntimeError as e:
            raise KernelCompileError(
                f"openvino: cannot compile kernel @{func.sym_name.data}: {_reason(e)}"
            ) from None
        self.request: ov.InferRequest | None = self.compiled.create_infer_request()
        self._outputs = range(len(self.compiled.outputs))
        self._arity = len(self.signature.inputs)

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """OpenVINO refuses a tensor of the wrong dtype or shape itself, so the signature
        is checked in full only to name the misfit when it does, or when the count is
        wrong (checking first costs a call a few percent on small models)."""
        request = self.request
        assert request is not None, "the kernel was released"
        if len(inputs) != self._arity:
            self.signature.check(inputs)  # raises KernelRunError naming the misfit
        # set_input_tensor + infer is the cheapest call path (infer(dict) costs more)
        try:
            for i, x in enumerate(inputs):
                request.set_input_tensor(i, ov.Tensor(np.require(x, requirements="C"),
                                                      shared_memory=True))  # 0-d stays 0-d
            request.infer()
        except Exception:
            self.signature.check(inputs)
            raise
        return [request.get_output_tensor(i).data.copy() for i in self._outputs]

    def release(self) -> None:
        self.request = None
        self.compiled = None


def compile(func: FuncOp, policy: ThreadPolicy) -> OpenVinoKernel:
    return OpenVinoKernel(func, policy)

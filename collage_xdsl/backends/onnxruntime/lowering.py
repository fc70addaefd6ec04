"""The ONNX Runtime hook: kernel -> ONNX model -> InferenceSession on the CPU EP.

Threads and spinning follow `ThreadPolicy`; all graph optimisations are on. A kernel whose
weights exceed protobuf's 2 GB hands them to the session as external initializers. Inputs go to
`InferenceSession.run` as numpy arrays, which ONNX Runtime wraps without a copy (the
cheapest of its call paths per call, `docs/measurement.md`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnxruntime as ort
from xdsl.dialects.func import FuncOp

from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.backends.onnx_export import detach_initializers, export_onnx, too_large
from collage_xdsl.backends.signature import Signature
from collage_xdsl.backends.threads import DEFAULT_SPINNING, ThreadPolicy

ort.set_default_logger_severity(3)

VERSION = f"{ort.__version__}+spin-{DEFAULT_SPINNING}"
"""The library's version and the spinning that costs are measured with (the process's
default policy), so costs measured with other spinning are keyed apart."""


def session_options(policy: ThreadPolicy) -> ort.SessionOptions:
    options = ort.SessionOptions()
    intra, inter, config = policy.onnxruntime_config()
    options.intra_op_num_threads = intra
    options.inter_op_num_threads = inter
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    for key, value in config.items():
        options.add_session_config_entry(key, value)
    return options


class OrtKernel:
    """A kernel running in an ONNX Runtime session."""

    backend = "onnxruntime"
    version = VERSION

    def __init__(self, func: FuncOp, policy: ThreadPolicy):
        self.signature = Signature.of(func, self.backend)
        model = export_onnx(func, self.backend)
        options = session_options(policy)
        if too_large(model):  # over protobuf's 2 GB: the weights go beside the model
            weights = detach_initializers(model, "weights.bin")
            options.add_external_initializers(
                list(weights), [ort.OrtValue.ortvalue_from_numpy(w) for w in weights.values()])
        try:
            self.session: ort.InferenceSession | None = ort.InferenceSession(
                model.SerializeToString(), options, providers=["CPUExecutionProvider"],
            )
        except Exception as e:  # ORT raises its own Fail / InvalidGraph / RuntimeException types
            raise KernelCompileError(
                f"onnxruntime: cannot compile kernel @{func.sym_name.data}: {e}"
            ) from None
        self._inputs = [i.name for i in self.session.get_inputs()]
        self._outputs = [o.name for o in self.session.get_outputs()]

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """ONNX Runtime checks the dtypes and shapes of numpy arrays itself (strided ones
        are fine), so the signature is checked in full only to name the misfit when it
        refuses them, or when the count or a type is wrong (checking first costs a call
        a few percent on small models)."""
        assert self.session is not None, "the kernel was released"
        if len(inputs) != len(self._inputs):
            self.signature.check(inputs)  # raises KernelRunError naming the misfit
        for x in inputs:
            if type(x) is not np.ndarray:
                inputs = self.signature.check(inputs)
                break
        try:
            return self.session.run(self._outputs, dict(zip(self._inputs, inputs)))
        except Exception:
            self.signature.check(inputs)
            raise

    def release(self) -> None:
        self.session = None


def compile(func: FuncOp, policy: ThreadPolicy) -> OrtKernel:
    return OrtKernel(func, policy)

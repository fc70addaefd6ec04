"""The configurations a model is benchmarked in, and the check of their outputs.

    specs = {"onnxruntime": whole_model("onnxruntime", model),
             "pf-openvino": plan(partition_for(model.module, "openvino")), ...}
    problem, notes = OutputCheck(model, inputs, reference, policy).compare(outputs)

A configuration is what a process of its own builds (`collage_xdsl.runtime.configurations`).
Single backends run in their best whole-model configuration, as their users run them (as
`collage bench` runs them): `onnxruntime` one session over the whole ONNX file and
`openvino` the whole file compiled for CPU in f32, each with its own defaults but the thread
count; `iree` the whole model lowered to linalg and compiled by IREE for the host CPU
(`docs/mlir.md`), `tvm` our lowering of the whole model as one Relax module, fused by TVM
(`collage-assign{backend=tvm fusion=whole}`; one module per FuseOps group took 5-70%
longer), through the runtime. `pf-<backend>` is the greedy BYOC baseline
(`collage-partition-for{backend=...}`, then `collage-outline`) through the runtime;
`collage-tvm+<backend>` is Collage (refined) with only tvm and that backend, compared
with `pf-<backend>` (`PAIRS`). Plans through the runtime run with `policy_for_plan`: one
library's own defaults when all their kernels are that library's, the shared policy when
they mix libraries.

Outputs are compared with ONNX Runtime's within RTOL / ATOL, raised for a float16 model
and, for a dequantized output, to one quantization step (`runtime.agreement.tolerances`).
One exception: an output
computed by a Softmax whose logits are so large that one float32 ulp of them (np.spacing)
is at least RTOL: then a rounding-level difference in the logits moves the probabilities
by more than the tolerance, and which backend is "right" is decided by rounding (the light
SqueezeNet's logits are 6.8e9, all equal: ONNX Runtime gives 1/1000 everywhere, OpenVINO a
one-hot). Such a disagreement is a note, not a failure; the logits come from ONNX Runtime
on a copy of the model that also outputs them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import helper
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from collage_xdsl.backends import BackendOptions
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.runtime.agreement import ill_conditioned, tolerances
from collage_xdsl.runtime.configurations import Configuration, Plan
from collage_xdsl.tools import bench as collage_bench
from collage_xdsl.tools.model import LoadedModel

SINGLES = ("onnxruntime", "openvino", "tvm", "iree")
BASELINES = ("pf-onnxruntime", "pf-openvino")
COLLAGE = ("collage-search", "collage")
PAIRS = {"collage-tvm+onnxruntime": "pf-onnxruntime", "collage-tvm+openvino": "pf-openvino"}
"""Collage with tvm and one BYOC backend (refined), and the greedy baseline it must match."""
CONFIGS = SINGLES + BASELINES + COLLAGE + tuple(PAIRS)
REFERENCE = "onnxruntime"
RTOL, ATOL = 1e-3, 1e-4


def whole_model(backend: str, model: LoadedModel, options: BackendOptions | None = None
                ) -> Configuration:
    """`backend` alone on the whole model, in its best configuration (as `collage bench`
    runs it: ONNX Runtime and OpenVINO on the ONNX file)."""
    assert model.onnx_path is not None
    return collage_bench.whole_model_config(backend, model, options)


def partition_for(module: ModuleOp, backend: str) -> ModuleOp:
    """A copy of `module` partitioned by the greedy BYOC baseline for `backend`, outlined."""
    from collage_xdsl.passes.outline import CollageOutlinePass
    from collage_xdsl.passes.partition_for import CollagePartitionForPass

    module = module.clone()
    CollagePartitionForPass(backend=backend).apply(Context(), module)
    CollageOutlinePass().apply(Context(), module)
    return module


def plan(module: ModuleOp, options: BackendOptions | None = None) -> Configuration:
    """An outlined module through the runtime."""
    return Plan.of(module, options)


def _mismatch(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {list(got.shape)} instead of {list(want.shape)}"
    if np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return None
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    return f"max abs difference {np.nanmax(diff):.3g}"


def softmax_logits(path, output_names: Sequence[str], inputs: Sequence[np.ndarray],
                   policy: ThreadPolicy) -> dict[str, np.ndarray]:
    """For each model output that a Softmax computes, ONNX Runtime's value of its input."""
    model = onnx.load(path)
    producers = {out: node for node in model.graph.node for out in node.output}
    logits = {}
    for output in model.graph.output:
        node = producers.get(output.name)
        if node is not None and node.op_type == "Softmax" and output.name in output_names:
            logits[output.name] = node.input[0]
            model.graph.output.append(helper.make_tensor_value_info(
                node.input[0], output.type.tensor_type.elem_type, None))
    if not logits:
        return {}
    import onnxruntime as ort

    from collage_xdsl.backends.onnxruntime.lowering import session_options

    session = ort.InferenceSession(model.SerializeToString(), session_options(policy),
                                   providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    values = session.run(list(logits.values()), dict(zip(names, inputs)))
    return dict(zip(logits, values))


class OutputCheck:
    """Compares outputs with the reference's; explains ill-conditioned Softmax outputs."""

    def __init__(self, model: LoadedModel, inputs: Sequence[np.ndarray],
                 reference: Sequence[np.ndarray], policy: ThreadPolicy):
        self.model, self.inputs, self.reference, self.policy = model, inputs, reference, policy
        self.rtol, self.atol = tolerances(model.module, RTOL, ATOL)
        self._logits: dict[str, np.ndarray] | None = None

    def logits(self) -> dict[str, np.ndarray]:
        if self._logits is None:
            self._logits = softmax_logits(self.model.onnx_path, self.model.output_names,
                                          self.inputs, self.policy)
        return self._logits

    def compare(self, outputs: Sequence[np.ndarray]) -> tuple[str | None, list[str]]:
        """(the disagreement that fails the configuration or None, notes)."""
        if len(outputs) != len(self.reference):
            return f"{len(outputs)} outputs instead of {len(self.reference)}", []
        notes = []
        for name, got, want in zip(self.model.output_names, outputs, self.reference):
            mismatch = _mismatch(got, want, self.rtol, self.atol)
            if mismatch is None:
                continue
            logits = self.logits().get(name)
            if logits is None or not ill_conditioned(logits) or got.shape != want.shape:
                return f"disagrees with {REFERENCE} on output {name!r}: {mismatch}", []
            notes.append(
                f"output {name!r} differs from {REFERENCE} ({mismatch}) but is the Softmax of "
                f"logits up to {np.abs(logits).max():.3g}, where one float32 ulp is "
                f"{np.spacing(np.float32(np.abs(logits).max())):.3g}: decided by rounding"
            )
        return None, notes

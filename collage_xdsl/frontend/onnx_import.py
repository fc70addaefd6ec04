"""Import an ONNX model into the `collage` dialect.

    module = import_onnx(onnx.load("m.onnx"), input_shapes={"x": [1, 3, 224, 224]})

One argument per real graph input; initializers and every input-independent sub-graph
folded into `collage.constant`s (onnx's reference evaluator); every other node lowered by
its converter (`collage_xdsl.frontend.converters`) with static shapes cross-checked
against ONNX shape inference, so a model the dialect cannot represent is a
`FrontendError` naming the node. xDSL's `cse` then merges equal computations (weights are
keyed by content), so every backend sees each computation once.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import external_data_helper, helper, numpy_helper, shape_inference
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.transforms.common_subexpression_elimination import cse

import collage_xdsl.frontend.einsum_converters  # noqa: F401 (registers its converters)
import collage_xdsl.frontend.index_converters  # noqa: F401 (registers its converters)
import collage_xdsl.frontend.norm_converters  # noqa: F401 (registers its converters)
import collage_xdsl.frontend.qdq_converters  # noqa: F401 (registers its converters)
import collage_xdsl.frontend.recurrent_converters  # noqa: F401 (registers its converters)
import collage_xdsl.frontend.shape_converters  # noqa: F401 (registers its converters)
import collage_xdsl.frontend.window_converters  # noqa: F401 (registers its converters)
from collage_xdsl.dialects.collage import ConstantOp
from collage_xdsl.errors import CollageError
from collage_xdsl.frontend.context import FrontendError, NodeContext, Value, onnx_dtype
from collage_xdsl.frontend.converters import CONVERTERS
from collage_xdsl.ir.tensors import TensorError, constant_op, ir_dtype, np_dtype

MIN_OPSET = 9
"""The oldest ai.onnx opset the converters know the attribute / input conventions of."""

SHAPE_INFERENCE_LIMIT = 4096
"""Initializers with more elements are hidden from shape inference (only small, shape-like
tensors are needed there); this keeps inference fast and under protobuf's 2 GB limit."""

_SHAPE_ONLY = {"Shape", "Size"}
"""Ops that always fold: every shape is static, whether or not the value is known."""

_NEVER_FOLDED = {"DequantizeLinear"}
"""Ops converted even when their inputs are constant: a dequantized int8 weight stays a
`collage.dequantize_linear`, the QDQ form backends fuse (`qdq_converters`)."""

_TYPED_AS_INPUT_0 = {"GroupNormalization"}
"""Ops ONNX shape inference leaves untyped (functions without an inference function); their
output has input 0's type, so inference sees them as an Identity."""


def _sanitize(name: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_$.-]", "_", name)
    return name if name and not name[0].isdigit() else f"_{name}"


def node_value_name(name: str) -> str:
    """The SSA name of a node's results: `_sanitize`d, a final `_N` written `.N` (MLIR
    printers take `_N` for their own uniquing suffix and would drop it): `conv_2` ->
    `conv.2`, `/layer1/Conv` -> `_layer1_Conv`."""
    return re.sub(r"_(\d+)$", r".\1", _sanitize(name))


class OnnxImporter:
    """One import: the value table, the function body being built, ONNX's inferred types."""

    def __init__(self, model: onnx.ModelProto, source: str,
                 input_shapes: dict[str, list[int]] | None):

        self.converters = CONVERTERS
        self.model = model
        self.source = source
        self.input_shapes = dict(input_shapes or {})
        self.opset = next(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None
        )
        if self.opset is None or self.opset < MIN_OPSET:
            raise self.error(
                f"default-domain (ai.onnx) opset {self.opset} is not supported "
                f"(need >= {MIN_OPSET})"
            )
        self.values: dict[str, Value] = {}
        self.materialized: dict[str, SSAValue] = {}
        self.block = Block()
        graph = model.graph
        self.nodes = self.live_nodes()
        self.used = {name for node in self.nodes for name in node.input if name}
        self.used |= {o.name for o in graph.output}

    def error(self, reason: str) -> FrontendError:
        return FrontendError(f"{self.source}: {reason}")

    def element_type(self, dtype: np.dtype, where: str) -> Attribute:
        try:
            return ir_dtype(dtype)
        except TensorError as e:
            raise self.error(f"{where}: {e}") from None

    def ssa(self, name: str) -> SSAValue:
        """The SSA value of `name`, materializing a folded constant on first use."""
        value = self.values[name]
        if isinstance(value, SSAValue):
            return value
        if name not in self.materialized:
            self.element_type(value.dtype, f"constant '{name}'")
            op = constant_op(value)
            self.block.add_op(op)
            self.materialized[name] = op.results[0]
        return self.materialized[name]

    # -- the steps of an import ----------------------------------------------------------

    def run(self) -> ModuleOp:
        graph = self.model.graph
        if not graph.output:
            raise self.error("the graph has no outputs")
        self.check_single_assignment()
        self.check_supported()
        initializers = {t.name: t for t in graph.initializer}
        for name, tensor in initializers.items():
            if name in self.used:
                self.values[name] = numpy_helper.to_array(tensor)
        args = [i for i in graph.input if i.name not in initializers]
        for name in self.input_shapes:
            if name not in {i.name for i in args}:
                raise self.error(f"input_shapes names '{name}', which is not a graph input")
        self.check_symbolic(args)
        arg_types = [self.input_type(i) for i in args]
        self.inferred = self.infer_types(args, arg_types)
        for info, t in zip(args, arg_types):
            arg = self.block.insert_arg(t, len(self.block.args))
            arg.name_hint = _sanitize(info.name)
            self.values[info.name] = arg
        for node in self.nodes:
            self.convert(node)
        results = []
        for out in graph.output:
            if out.name not in self.values:
                raise self.error(f"graph output '{out.name}' is produced by no node")
            results.append(self.ssa(out.name))
        self.block.add_op(ReturnOp(*results))
        func = FuncOp(
            "main", ([a.type for a in self.block.args], [r.type for r in results]),
            Region(self.block),
        )
        module = ModuleOp([func])
        cse(module)
        return module

    def live_nodes(self) -> list[onnx.NodeProto]:
        """The nodes the graph outputs depend on, in graph order (dead nodes are dropped)."""
        live = {o.name for o in self.model.graph.output}
        nodes = []
        for node in reversed(self.model.graph.node):
            if any(name in live for name in node.output):
                nodes.append(node)
                live.update(name for name in node.input if name)
        return nodes[::-1]

    def check_single_assignment(self) -> None:
        """Every value is defined once: a graph input or initializer (or both, as before
        IR version 4), or one output of one node."""
        graph = self.model.graph
        defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
        for node in graph.node:
            for name in filter(None, node.output):
                if name in defined:
                    raise self.error(f"node '{node.name or name}' ({node.op_type}) defines "
                                     f"'{name}', which is already defined")
                defined.add(name)

    def check_supported(self) -> None:
        """Every node that will not fold needs a converter; list all that have none."""
        known = {t.name for t in self.model.graph.initializer}
        bad = []
        for node in self.nodes:
            inputs = [n for n in node.input if n]
            if node.domain in ("", "ai.onnx") and (
                (all(n in known for n in inputs) and node.op_type not in _NEVER_FOLDED)
                or node.op_type in _SHAPE_ONLY
            ):
                known.update(node.output)
            elif node.domain not in ("", "ai.onnx") or node.op_type not in self.converters:
                op = f"{node.domain}.{node.op_type}" if node.domain not in ("", "ai.onnx") else (
                    node.op_type
                )
                bad.append(f"node '{node.name or node.output[0]}' ({op}): unsupported ONNX op")
        if bad:
            raise self.error("\n".join(bad))

    def input_type(self, info: onnx.ValueInfoProto) -> TensorType:
        t = info.type
        if not t.HasField("tensor_type"):
            raise self.error(f"input '{info.name}' is not a tensor")
        dtype = onnx_dtype(t.tensor_type.elem_type)
        if info.name in self.input_shapes:
            shape = [int(d) for d in self.input_shapes[info.name]]
            dims = t.tensor_type.shape.dim
            known = [d.dim_value if d.HasField("dim_value") else None for d in dims]
            if len(known) != len(shape) or any(k not in (None, s) for k, s in zip(known, shape)):
                declared = [d.dim_value if d.HasField("dim_value") else d.dim_param or "?"
                            for d in dims]
                raise self.error(f"input '{info.name}': input_shapes gives {shape}, the model "
                                 f"declares {declared}")
        else:
            if not t.tensor_type.HasField("shape"):
                raise self.error(f"input '{info.name}' has an unknown rank; give input_shapes")
            shape = [d.dim_value for d in t.tensor_type.shape.dim]  # fixed: check_symbolic
        if any(d < 0 for d in shape):
            raise self.error(f"input '{info.name}' has a negative dimension: {shape}")
        return TensorType(self.element_type(dtype, f"input '{info.name}'"), shape)

    def check_symbolic(self, args: Sequence[onnx.ValueInfoProto]) -> None:
        """Every symbolic dimension of an input `input_shapes` does not fix is listed in
        one error, with the `--input-shape` flags that would fix them."""
        unresolved = {}
        for info in args:
            t = info.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else d.dim_param or "?"
                    for d in t.shape.dim]
            if info.name not in self.input_shapes and any(isinstance(d, str) for d in dims):
                unresolved[info.name] = dims
        if len(unresolved) == 1 and sum(isinstance(d, str) for d in
                                        next(iter(unresolved.values()))) == 1:
            (name, dims), = unresolved.items()
            symbol = next(d for d in dims if isinstance(d, str))
            raise self.error(f"input '{name}' has symbolic dimension '{symbol}'; fix it with "
                             f"input_shapes={{'{name}': [...]}} (on the command line: "
                             f"--input-shape {name}:D1,D2,...)")
        if unresolved:
            listed = ", ".join(f"'{n}' [{', '.join(map(str, d))}]" for n, d in unresolved.items())
            flags = " ".join(f"--input-shape {n}:{','.join(f'D{k + 1}' for k in range(len(d)))}"
                             for n, d in unresolved.items())
            raise self.error(f"inputs have symbolic dimensions: {listed}; fix them with "
                             f"input_shapes (on the command line: {flags})")

    def infer_types(self, args, arg_types) -> dict[str, onnx.TypeProto]:
        """ONNX's inferred type of every value (one strict inference over a weight-less copy)."""
        graph = self.model.graph
        small = [t for t in graph.initializer if np.prod(t.dims) <= SHAPE_INFERENCE_LIMIT]
        weights = [  # every initializer is a declared input: IR version 3 requires it
            helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
            for t in graph.initializer
        ]
        inputs = [
            helper.make_tensor_value_info(
                i.name, i.type.tensor_type.elem_type, list(t.get_shape())
            )
            for i, t in zip(args, arg_types)
        ]
        nodes = [helper.make_node("Identity", n.input[:1], n.output[:1], name=n.name)
                 if n.op_type in _TYPED_AS_INPUT_0 else n for n in self.nodes]
        skeleton = helper.make_graph(
            nodes, graph.name, inputs + weights, graph.output, small,
            value_info=graph.value_info,
        )
        model = helper.make_model(
            skeleton, opset_imports=self.model.opset_import, ir_version=self.model.ir_version
        )
        model.functions.extend(self.model.functions)
        try:
            inferred = shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
        except (onnx.shape_inference.InferenceError, onnx.checker.ValidationError) as e:
            message = re.sub(r"\(op_type:(\w+), node name: ([^)]*)\): ", r"\nnode '\2' (\1): ",
                             str(e).replace("Inference error(s): ", "")).strip()
            raise self.error(f"ONNX shape inference failed: {message}") from None
        g = inferred.graph
        return {v.name: v.type for v in [*g.value_info, *g.output, *g.input]}

    def convert(self, node: onnx.NodeProto) -> None:
        """Convert one node; the ops it becomes (constants aside) take its name, or its
        first output's, as their results' SSA name (`%conv1`), so plans, reports and
        pictures name ops as the model does."""
        ctx = NodeContext(self, node, self.opset)
        last = self.block.last_op
        for name in node.input:
            if name and name not in self.values:
                raise ctx.error(f"input '{name}' is not defined before the node")
        if node.op_type in _SHAPE_ONLY or (node.op_type not in _NEVER_FOLDED and all(
            isinstance(self.values[n], np.ndarray) for n in node.input if n
        )):
            outputs = self.fold(ctx)
        else:
            outputs = list(self.converters[node.op_type](ctx))
            self.name_results(last, node_value_name(ctx.name))
        for i, name in enumerate(node.output):
            if not name:
                continue
            value = outputs[i] if i < len(outputs) else None
            if value is None:
                if name in self.used:
                    raise ctx.error(f"output {i} ('{name}') is used but not supported")
                continue
            if isinstance(value, SSAValue):
                self.check_type(ctx, name, value.type)
            self.values[name] = value

    def name_results(self, last: Operation | None, name: str) -> None:
        """Name the results of the ops added after `last` (constants keep no name)."""
        op = self.block.first_op if last is None else last.next_op
        while op is not None:
            if not isinstance(op, ConstantOp):
                for result in op.results:
                    result.name_hint = name
            op = op.next_op

    def fold(self, ctx: NodeContext) -> list[np.ndarray]:
        """Evaluate a node whose inputs are all known with onnx's reference evaluator."""
        node = ctx.node
        feeds = {}
        for name in node.input:
            if not name:
                continue
            value = self.values[name]
            if isinstance(value, SSAValue):  # a Shape/Size input: only its type matters
                t = value.type
                assert isinstance(t, TensorType)
                value = np.broadcast_to(
                    np.zeros((), np_dtype(t.get_element_type())), tuple(t.get_shape())
                )
            feeds[name] = value
        try:
            graph = helper.make_graph(
                [node], "fold", [onnx.ValueInfoProto(name=n) for n in feeds],
                [onnx.ValueInfoProto(name=n) for n in node.output if n],
            )
            opsets = [helper.make_opsetid("", self.opset)]
            evaluator = ReferenceEvaluator(helper.make_model(graph, opset_imports=opsets))
            outputs = evaluator.run(None, feeds)
        except Exception as e:  # the reference evaluator raises many exception types
            raise ctx.error(f"constant folding failed: {type(e).__name__}: {e}") from None
        return [np.asarray(o) for o in outputs]

    def check_type(self, ctx: NodeContext, name: str, actual: Attribute) -> None:
        """Cross-check a built result type against ONNX's inferred type (known parts)."""
        expected = self.inferred.get(name)
        if expected is None or not expected.HasField("tensor_type"):
            return
        tt = expected.tensor_type
        assert isinstance(actual, TensorType)
        shape = list(actual.get_shape())
        if tt.elem_type and ctx.element_type(onnx_dtype(tt.elem_type)) != (
            actual.get_element_type()
        ):
            raise ctx.error(
                f"output '{name}' has element type {actual.get_element_type()}, ONNX infers "
                f"{onnx_dtype(tt.elem_type)}"
            )
        if not tt.HasField("shape"):
            return
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        if len(dims) != len(shape) or any(d is not None and d != s for d, s in zip(dims, shape)):
            raise ctx.error(
                f"output '{name}' has shape {shape}, ONNX infers "
                f"{['?' if d is None else d for d in dims]}"
            )


def import_onnx(
    model: str | Path | onnx.ModelProto,
    input_shapes: dict[str, list[int]] | None = None,
) -> ModuleOp:
    """Import an ONNX model (a path, or a loaded ModelProto) as a `collage` module.

    `input_shapes` fixes symbolic input dimensions, e.g. ``{"input": [1, 3, 224, 224]}``.
    Raises `FrontendError` for a model the dialect cannot represent.
    """
    if isinstance(model, onnx.ModelProto):
        source = model.graph.name or "<model>"
    else:
        source = str(model)
        try:
            model = onnx.load(source)
        except FileNotFoundError:
            raise FrontendError(f"{source}: no such file") from None
        except Exception as e:  # protobuf decode errors have no common base class
            raise FrontendError(f"{source}: not a readable ONNX model: {e}") from None
    return OnnxImporter(model, source, input_shapes).run()


def parse_input_shapes(specs: Sequence[str] | None) -> dict[str, list[int]] | None:
    """``--input-shape NAME:D1,D2,...`` values (symbolic input dimensions fixed) as the
    frontend's ``input_shapes``; None when there are none."""
    if not specs:
        return None
    shapes: dict[str, list[int]] = {}
    for spec in specs:
        name, sep, dims = spec.rpartition(":")
        try:
            shape = [int(d) for d in dims.split(",")]
        except ValueError:
            shape = []
        if not sep or not name or not shape or min(shape) < 1 or name in shapes:
            raise CollageError(f"--input-shape: expected NAME:D1,D2,... with positive "
                               f"dimensions, each input once, got {spec!r}")
        shapes[name] = shape
    return shapes


def read_onnx(data: bytes, name: str, input_shapes: dict[str, list[int]] | None = None,
              base_dir: str | Path | None = None) -> tuple[ModuleOp, onnx.ModelProto]:
    """Import the serialized ONNX model `data` read from `name` (named in every error),
    with `input_shapes` fixing symbolic input dimensions; tensors stored in external-data
    files are read from `base_dir` (the model file's folder; default: `name`'s)."""
    try:
        model = onnx.load_model_from_string(data)
    except Exception as e:  # protobuf decode errors have no common base class
        raise FrontendError(f"{name}: not a readable ONNX model: {e}") from None
    if not model.HasField("graph"):
        raise FrontendError(f"{name}: not an ONNX model: it has no graph"
                            + (" (the file is empty)" if not data else ""))
    load_external_data(model, name, Path(name).parent if base_dir is None else Path(base_dir))
    try:
        return import_onnx(model, input_shapes), model
    except FrontendError as e:  # its message names the graph and node; add the file
        raise FrontendError(f"{name}: {e}") from None


def load_external_data(model: onnx.ModelProto, name: str, base_dir: Path) -> None:
    """Read the tensors `model` keeps in external-data files, relative to `base_dir`; a
    missing file is a `FrontendError` naming it and the tensor, as is one onnx cannot read
    (outside `base_dir`, too short)."""
    for tensor in model.graph.initializer:
        if external_data_helper.uses_external_data(tensor):
            path = base_dir / external_data_helper.ExternalDataInfo(tensor).location
            if not path.is_file():
                raise FrontendError(f"{name}: tensor '{tensor.name}' is stored in external-data "
                                    f"file {path}, which does not exist")
    try:
        external_data_helper.load_external_data_for_model(model, str(base_dir))
    except Exception as e:  # onnx's checker errors have no common base class
        raise FrontendError(f"{name}: cannot read its external data from {base_dir}: "
                            f"{e}") from None

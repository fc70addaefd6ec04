"""Walking a kernel function for a translator: tuples, projections, composites, return.

A translator supplies ``emit(op, operands) -> results`` for the collage ops that
compute something; `lower_function` handles the structure around them. Values are
the translator's own (ONNX value names, Relax expressions); a tuple is a Python
tuple of values. Tuple-typed parameters and results are flattened: the kernel's
signature is the flat list of its tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from xdsl.dialects.builtin import TensorType, TupleType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from collage_xdsl.backends.kernel import KernelCompileError
from collage_xdsl.dialects import collage as C
from collage_xdsl.dialects.collage import get_int

V = TypeVar("V")


def flat_types(types: Sequence[Attribute]) -> list[TensorType]:
    """The tensor types of ``types`` with tuples flattened, in order."""
    flat: list[TensorType] = []
    for t in types:
        if isinstance(t, TupleType):
            flat += flat_types(t.types.data)
        else:
            if not isinstance(t, TensorType):
                raise KernelCompileError(f"kernel values must be tensors or tuples, got {t}")
            flat.append(t)
    return flat


def flatten(values: Sequence) -> list:
    """``values`` (tuples nested to any depth) as a flat list."""
    flat: list = []
    for v in values:
        flat += flatten(v) if isinstance(v, tuple) else [v]
    return flat


def unflatten(types: Sequence[Attribute], flat: Sequence[V]) -> list:
    """Regroup a flat list of values into the (tuple) structure of ``types``."""
    values: list = []
    rest = list(flat)
    for t in types:
        n = len(flat_types([t]))
        group, rest = rest[:n], rest[n:]
        is_tuple = isinstance(t, TupleType)
        values.append(tuple(unflatten(t.types.data, group)) if is_tuple else group[0])
    return values


Emit = Callable[[Operation, list], list]


def _lower_block(block: Block, args: Sequence, emit: Emit, end: type[Operation]) -> list:
    env: dict[SSAValue, object] = dict(zip(block.args, args))
    for op in block.ops:
        operands = [env[v] for v in op.operands]
        if isinstance(op, end):
            return operands
        if isinstance(op, C.TupleOp):
            results = [tuple(operands)]
        elif isinstance(op, C.GetItemOp):
            results = [operands[0][get_int(op.index, 0)]]
        elif isinstance(op, C.CompositeOp):
            results = _lower_block(op.body.block, operands, emit, C.YieldOp)
        else:
            results = emit(op, operands)
        env.update(zip(op.results, results))
    raise AssertionError(f"block does not end in {end.name}")


def lower_function(func: FuncOp, args: Sequence[V], emit: Emit) -> list:
    """Translate ``func``'s body, its parameters bound to the flat ``args``; the flat results."""
    block = func.body.block
    grouped = unflatten([a.type for a in block.args], args)
    return flatten(_lower_block(block, grouped, emit, ReturnOp))

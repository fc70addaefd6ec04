"""Structural hashing of functions: equal for kernels that compute the same thing.

The digest covers signatures, op names, attributes (weights by their content key),
result types and operand wiring, not SSA names, symbol names or positions in a model;
it keys the cost database and the compiled-kernel cache.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, SSAValue


def function_hash(funcs: Iterable[FuncOp], *, names: bool = False) -> str:
    """A hex digest of ``funcs``' structure; with ``names``, their symbol names count too
    (for a kernel together with the functions it calls)."""
    h = hashlib.blake2b(digest_size=16)
    numbers: dict[SSAValue, int] = {}

    def block(b: Block) -> None:
        h.update(f"^({','.join(str(a.type) for a in b.args)})".encode())
        for a in b.args:
            numbers[a] = len(numbers)
        for op in b.ops:
            attrs = sorted({**op.properties, **op.attributes}.items())
            h.update(f"{op.name}({','.join(str(numbers[v]) for v in op.operands)})"
                     f"{{{','.join(f'{k}={v}' for k, v in attrs)}}}"
                     f"->({','.join(str(r.type) for r in op.results)})".encode())
            for r in op.results:
                numbers[r] = len(numbers)
            for region in op.regions:
                h.update(b"{")
                for inner in region.blocks:
                    block(inner)
                h.update(b"}")

    for func in funcs:
        h.update((f"@{func.sym_name.data}" if names else str(func.function_type)).encode())
        block(func.body.block)
    return h.hexdigest()

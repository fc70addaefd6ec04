"""Side-by-side compile and run times of the three codegen hooks.

    python benchmarks/tools/codegen_bench.py [--repeat 200] [--threads 2] [--spinning off|run|on]

Kernels: a 3x3 conv (1x16x32x32 -> 32 channels) + relu, a 256x256 matmul, and a
single relu on 1x16 (the per-call overhead). Runs are interleaved across backends
(one call of each per round, in `collage_xdsl.measure.timing`'s balanced order) so that
no library gets the machine to itself; the figures are medians.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable

import numpy as np
from collage_xdsl.dialects import collage as C
from xdsl.dialects.builtin import FunctionType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region

from collage_xdsl.backends import compile_kernel, runnable_backends
from collage_xdsl.backends.threads import DEFAULT_SPINNING, SPINNING, ThreadPolicy
from collage_xdsl.ir.tensors import constant_op, tensor_type
from collage_xdsl.measure.timing import clocked, interleave, timed


def _kernel(name: str, shape: tuple[int, ...], build: Callable) -> FuncOp:
    block = Block(arg_types=[tensor_type(shape, np.float32)])
    ops = build(block.args[0])
    block.add_ops([*ops, ReturnOp(ops[-1].results[0])])
    types = FunctionType.from_lists([block.args[0].type], [ops[-1].results[0].type])
    return FuncOp(name, types, Region(block))


def kernels(rng: np.random.Generator) -> dict[str, FuncOp]:
    def conv(x):
        w = constant_op(rng.normal(0, 0.1, (32, 16, 3, 3)).astype(np.float32))
        c = C.Conv2dOp(x, w.output, pads=(1, 1, 1, 1))
        return [w, c, C.ReluOp(c.output)]

    def matmul(x):
        w = constant_op(rng.normal(0, 0.1, (256, 256)).astype(np.float32))
        return [w, C.MatmulOp(x, w.output)]

    return {
        "conv3x3_relu 1x16x32x32": _kernel("conv", (1, 16, 32, 32), conv),
        "matmul 256x256": _kernel("matmul", (256, 256), matmul),
        "relu 1x16": _kernel("relu", (1, 16), lambda x: [C.ReluOp(x)]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--spinning", choices=SPINNING, default=DEFAULT_SPINNING,
                        help="how ONNX Runtime's idle threads wait (ThreadPolicy)")
    args = parser.parse_args()
    policy = ThreadPolicy(ThreadPolicy.resolve(args.threads).threads, args.spinning)
    rng = np.random.default_rng(0)
    print(f"threads={policy.threads}, ort spinning={policy.spinning}, "
          f"median of {args.repeat} interleaved runs")
    print(f"{'kernel':26} {'backend':12} {'compile ms':>11} {'run us':>10}")
    funcs = kernels(rng)
    for backend in runnable_backends():  # library start-up is not billed to the first kernel
        compile_kernel(backend, funcs["relu 1x16"], policy).release()
    for name, func in funcs.items():
        x = rng.normal(size=func.function_type.inputs.data[0].get_shape()).astype(np.float32)
        compiled, compile_s = {}, {}
        for backend in runnable_backends():
            compiled[backend], _, compile_s[backend] = clocked(
                lambda b=backend: compile_kernel(b, func, policy))
            compiled[backend]([x])  # warm-up
        times = interleave(list(compiled), range(args.repeat),
                           lambda b: timed(lambda: compiled[b]([x])))
        for backend in runnable_backends():
            run_us = statistics.median(times[backend]) * 1e6
            print(f"{name:26} {backend:12} {compile_s[backend] * 1e3:11.1f} {run_us:10.1f}")
            compiled[backend].release()


if __name__ == "__main__":
    main()

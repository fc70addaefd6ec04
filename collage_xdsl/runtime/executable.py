"""The runtime: execute an outlined module end to end on its kernels' backends.

    exe = Executable(module)                    # after collage-partition + collage-outline
    outputs = exe.run([x])
    outputs, profile = exe.profile([x], runs=20)  # each kernel's median of 20 runs
    exe = Executable(module, threads=policy_for_plan(module))   # as `collage run` runs it

Kernel functions are compiled once per process (cached by backend version, structure and
thread policy); everything else in `@main` (tuples, projections) runs on the host through
the reference interpreter. Tensors pass between kernels as numpy arrays without copies,
each dropped after its last use. Plans listed in `collage.alternatives` run through a
`PlanSelector` (`collage_xdsl.runtime.selector`).
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    TupleType,
)
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import SymbolTable

from collage_xdsl.backends import BackendOptions, backend_for
from collage_xdsl.backends.kernel import CompiledKernel, KernelRunError
from collage_xdsl.backends.threads import ThreadPolicy
from collage_xdsl.backends.walk import flatten, unflatten
from collage_xdsl.core.outline import direct_kernel_call
from collage_xdsl.dialects import collage as C
from collage_xdsl.errors import CollageError
from collage_xdsl.ir.interpreter import evaluate_op, run_function
from collage_xdsl.ir.structure import function_hash
from collage_xdsl.ir.tensors import np_dtype, shape_of
from collage_xdsl.measure.timing import clocked
from collage_xdsl.runtime.selector import PlanSelector


class ExecutionError(CollageError):
    """A module the runtime cannot execute, or inputs that do not fit it."""


def plan_backends(module: ModuleOp) -> set[str]:
    """The backends of all of `module`'s kernels (functions and regions), the alternative
    plans' included."""
    found = set()
    for op in module.walk():
        if isinstance(op, C.KernelOp):
            found.add(op.backend.data)
        elif isinstance(op, FuncOp) and "collage.kernel" in op.attributes:
            backend = op.attributes.get("collage.backend")
            if isinstance(backend, StringAttr):
                found.add(backend.data)
    return found


def policy_for_plan(module: ModuleOp, threads: int | None = None) -> ThreadPolicy:
    """The thread policy `module` runs with (`threads` each, default the process's): a plan
    whose kernels all belong to one backend runs with that library's own defaults
    (`ThreadPolicy.library_defaults`), so that a plan of ONNX Runtime alone runs as ONNX
    Runtime alone does; a plan that mixes libraries shares the machine between them
    (`ThreadPolicy`: ONNX Runtime's threads stop spinning when its run returns, before the
    next library's kernel)."""
    threads = ThreadPolicy().threads if threads is None else threads
    if len(plan_backends(module)) == 1:
        return ThreadPolicy.library_defaults(threads)
    return ThreadPolicy(threads)


# ---------------------------------------------------------------------------
# Compiled kernels, cached per process
# ---------------------------------------------------------------------------


def kernel_key(func: FuncOp) -> str:
    """A hex digest of a kernel function's structure: types, op names, attributes and
    operand wiring (weights by their content key), not its name, SSA names or cost."""
    return function_hash([func])


KernelCompiler = Callable[[str, FuncOp, ThreadPolicy], CompiledKernel]
"""``compile(backend, kernel_func, policy)``: how an `Executable` gets its kernels."""

_COMPILED: dict[tuple[str, str, str, ThreadPolicy], CompiledKernel] = {}


def compiled_kernel(backend: str, func: FuncOp, policy: ThreadPolicy,
                    options: BackendOptions | None = None) -> CompiledKernel:
    """`func` compiled for `backend` (with its `options`), from the process cache when an
    equal kernel was compiled before for the same backend version."""
    found = backend_for(backend, options)
    key = (backend, found.version, kernel_key(func), policy)
    if key not in _COMPILED:
        _COMPILED[key] = found.compile(func, policy)
    return _COMPILED[key]


def cached_kernels() -> int:
    """How many compiled kernels the process cache holds."""
    return len(_COMPILED)


def release_cached_kernels() -> None:
    """Free every cached compiled kernel (Executables built before become unusable)."""
    for kernel in _COMPILED.values():
        kernel.release()
    _COMPILED.clear()


# ---------------------------------------------------------------------------
# Profiles
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelTiming:
    """One kernel call of a profiled run."""

    function: str
    backend: str
    seconds: float


@dataclass
class Profile:
    """Where the time of a run went: each kernel call, and host-side ops. Of one run, or
    (`Executable.profile`) the median of each over ``runs`` runs after a first call."""

    kernels: list[KernelTiming] = field(default_factory=list)
    host_seconds: float = 0.0
    total_seconds: float = 0.0
    runs: int = 1
    first_seconds: float | None = None
    """The first call's run, when the times are of the runs after it."""

    @staticmethod
    def median(profiles: Sequence[Profile], first_seconds: float) -> Profile:
        """Each kernel call's, the host ops' and the run's median time over the profiles
        of runs of one plan."""
        def mid(values) -> float:
            return float(np.median(list(values)))

        kernels = [KernelTiming(k.function, k.backend, mid(p.kernels[i].seconds
                                                           for p in profiles))
                   for i, k in enumerate(profiles[0].kernels)]
        return Profile(kernels, mid(p.host_seconds for p in profiles),
                       mid(p.total_seconds for p in profiles), len(profiles), first_seconds)

    def by_backend(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for k in self.kernels:
            totals[k.backend] = totals.get(k.backend, 0.0) + k.seconds
        return totals

    def format(self) -> str:
        """A table: one line per kernel call, then per-backend and host totals."""
        width = max([len(k.function) + 1 for k in self.kernels] + [24])
        lines = [] if self.first_seconds is None else [
            f"median of {self.runs} runs after a first call of {self.first_seconds * 1e3:.3f} ms"]
        lines += [f"{'kernel':<{width}} {'backend':<12} {'ms':>9}"]
        lines += [f"{'@' + k.function:<{width}} {k.backend:<12} {k.seconds * 1e3:>9.3f}"
                  for k in self.kernels]
        totals = [*((f"total {b}", s) for b, s in self.by_backend().items()),
                  ("host ops", self.host_seconds), ("run", self.total_seconds)]
        lines += [f"{name:<{width + 13}} {s * 1e3:>9.3f}" for name, s in totals]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class KernelCall:
    """One kernel call of a run, with the operands it got: ``kernel(operands)`` calls it
    again alone (`collage_xdsl.runtime.additivity`)."""

    function: str
    backend: str
    kernel: CompiledKernel
    operands: list


# ---------------------------------------------------------------------------
# Executable
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Step:
    """One op of `@main`: operands and results as slots of the value table."""

    op: Operation
    kernel: CompiledKernel | None
    """The compiled kernel a `func.call` reaches (None for host ops)."""
    callee: FuncOp | None
    """A non-kernel function called from `@main` (run by the interpreter)."""
    operands: tuple[int, ...]
    results: tuple[int, ...]
    dying: tuple[int, ...]
    """Slots whose last use is this step."""
    tuples: bool
    """Kernel operands or results include tuples (flattened for the kernel)."""


def _has_kernels(func: FuncOp) -> bool:
    return any(isinstance(op, C.KernelOp) for op in func.walk())


class Executable:
    """An outlined module ready to run: kernels compiled, host steps planned."""

    def __init__(self, module: ModuleOp, *, entry: str = "main",
                 threads: ThreadPolicy | int | None = None, adapt: bool = True,
                 backend_options: BackendOptions | None = None,
                 compile: KernelCompiler | None = None):
        """``backend_options`` configure the backends (`collage_xdsl.backends`);
        ``compile`` replaces how kernels are compiled (default: `compiled_kernel`)."""
        self.policy = ThreadPolicy.resolve(threads)
        self._compile_kernel = compile or (
            lambda backend, func, policy: compiled_kernel(backend, func, policy,
                                                          backend_options))
        main = SymbolTable.lookup_symbol(module, entry)
        if not isinstance(main, FuncOp) or main.is_declaration:
            raise ExecutionError(f"the module has no function @{entry} with a body")
        if _has_kernels(main):
            from collage_xdsl.core.outline import outline_kernels

            module = module.clone()
            outline_kernels(module)
            main = SymbolTable.lookup_symbol(module, entry)
            assert isinstance(main, FuncOp)
        self.module, self.main = module, main
        self.kernels: dict[str, CompiledKernel] = {}
        """Compiled kernel per kernel function name."""
        self._plan()
        self.selector: PlanSelector | None = None
        """Chooses between `@main` and its alternatives at run time, when it has any."""
        alternatives = self._alternatives() if adapt else []
        if alternatives:
            self.selector = PlanSelector(
                [self._run_plain, *(a._run_plain for a in alternatives)],
                names=[f"@{e.main.sym_name.data}" for e in (self, *alternatives)])

    def _alternatives(self) -> list[Executable]:
        """Executables of the plans `@main` lists in `collage.alternatives`."""
        names = self.main.attributes.get("collage.alternatives")
        if names is None:
            return []
        if not isinstance(names, ArrayAttr) or not all(
                isinstance(n, SymbolRefAttr) for n in names.data):
            raise ExecutionError(f"@{self.main.sym_name.data}: collage.alternatives must be "
                                 "an array of symbol references")
        found = []
        for ref in names.data:
            name = ref.string_value()
            try:
                found.append(Executable(self.module, entry=name, threads=self.policy,
                                        adapt=False, compile=self._compile_kernel))
            except CollageError as e:
                print(f"collage: alternative plan @{name} dropped: {e}", file=sys.stderr)
                continue
            if found[-1]._arg_types != self._arg_types or \
                    len(found[-1]._outputs) != len(self._outputs):
                raise ExecutionError(f"alternative plan @{name} does not have the signature "
                                     f"of @{self.main.sym_name.data}")
        return found

    def _plan(self) -> None:
        block = self.main.body.block
        self._arg_types = []
        for i, arg in enumerate(block.args):
            if not isinstance(arg.type, TensorType):
                raise ExecutionError(
                    f"@{self.main.sym_name.data} argument {i}: {arg.type} is not a tensor"
                )
            self._arg_types.append((shape_of(arg.type), np_dtype(arg.type.get_element_type())))
        slots: dict[SSAValue, int] = {a: i for i, a in enumerate(block.args)}
        self._constants: dict[int, object] = {}
        ops = [op for op in block.ops if not isinstance(op, ReturnOp)]
        last: dict[int, int] = {}
        planned: list[tuple[Operation, CompiledKernel | None, FuncOp | None]] = []
        for op in ops:
            for r in op.results:
                slots[r] = len(slots)
            if isinstance(op, C.ConstantOp):
                (value,) = evaluate_op(op, [])
                self._constants[slots[op.results[0]]] = value
                continue
            if isinstance(op, C.RegionOp):
                raise ExecutionError(f"{op.name} outside a kernel: the runtime runs kernels "
                                     "and host ops only")
            kernel = callee = None
            if isinstance(op, CallOp):
                callee = SymbolTable.lookup_symbol(op, op.callee)
                if not isinstance(callee, FuncOp):
                    raise ExecutionError(f"func.call: no function {op.callee} in the module")
                if "collage.kernel" in callee.attributes:
                    kernel, callee = self._compile(callee), None
            for v in (*op.results, *op.operands):  # an unused result dies at once
                last[slots[v]] = len(planned)
            planned.append((op, kernel, callee))
        terminator = block.last_op
        if not isinstance(terminator, ReturnOp):
            raise ExecutionError(f"@{self.main.sym_name.data} does not end in func.return")
        self._outputs = tuple(slots[v] for v in terminator.operands)
        keep = set(self._outputs) | set(self._constants)
        dying: list[list[int]] = [[] for _ in planned]
        for slot, index in last.items():
            if slot not in keep:
                dying[index].append(slot)
        self._steps = [
            _Step(op, kernel, callee, tuple(slots[v] for v in op.operands),
                  tuple(slots[r] for r in op.results), tuple(dying[i]),
                  kernel is not None and any(
                      isinstance(v.type, TupleType) for v in (*op.operands, *op.results)))
            for i, (op, kernel, callee) in enumerate(planned)
        ]
        self._num_slots = len(slots)
        whole = self._whole_model_step()
        self._run_plain: Callable[[Sequence[np.ndarray]], list[np.ndarray]] = (
            self._run_steps if whole is None else self._whole_model_runner(whole))
        """`@main`'s own plan, unprofiled."""

    def _whole_model_step(self) -> _Step | None:
        """The step when `@main` is one kernel call on its arguments, in order, returning
        its results (`direct_kernel_call`)."""
        if direct_kernel_call(self.main) is None:
            return None
        (step,) = self._steps
        return step

    def _compile(self, func: FuncOp) -> CompiledKernel:
        name = func.sym_name.data
        if name not in self.kernels:
            backend = func.attributes.get("collage.backend")
            if backend is None:
                raise ExecutionError(f"kernel function @{name} has no collage.backend")
            self.kernels[name] = self._compile_kernel(backend.data, func, self.policy)
        return self.kernels[name]

    def _check_inputs(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(inputs) != len(self._arg_types):
            raise ExecutionError(f"@{self.main.sym_name.data}: expected "
                                 f"{len(self._arg_types)} inputs, got {len(inputs)}")
        arrays = []
        for i, (x, (shape, dtype)) in enumerate(zip(inputs, self._arg_types)):
            x = np.asarray(x)
            if x.shape != shape or x.dtype != dtype:
                raise ExecutionError(f"@{self.main.sym_name.data}: input {i} must be "
                                     f"{dtype}{list(shape)}, got {x.dtype}{list(x.shape)}")
            arrays.append(x)
        return arrays

    @overload
    def run(self, inputs: Sequence[np.ndarray], profile: Literal[False] = False
            ) -> list[np.ndarray]: ...

    @overload
    def run(self, inputs: Sequence[np.ndarray], profile: Literal[True]
            ) -> tuple[list[np.ndarray], Profile]: ...

    def run(self, inputs, profile=False):
        """The outputs of `@main` on `inputs` (and the `Profile` when `profile` is set)."""
        if profile:
            return self._profiled_run(inputs)
        if self.selector is not None:
            return self.selector(inputs)
        return self._run_plain(inputs)

    def profile(self, inputs: Sequence[np.ndarray], runs: int = 20
                ) -> tuple[list[np.ndarray], Profile]:
        """The outputs of `@main` and its steady-state profile: a first call (compiling
        lazily, filling caches), then ``runs`` profiled runs, each time their median."""
        if runs < 1:
            raise ExecutionError(f"a profile needs at least 1 run, not {runs}")
        outputs, _, first = clocked(lambda: self._run(inputs, None, None))
        profiles = [self._profiled_run(inputs)[1] for _ in range(runs)]
        return outputs, Profile.median(profiles, first)

    def _run_steps(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """`@main`'s own plan, unprofiled, step by step."""
        return self._run(inputs, None, None)

    def _whole_model_runner(self, step: _Step) -> Callable[[Sequence[np.ndarray]],
                                                           list[np.ndarray]]:
        """`run` for a `@main` that is one kernel call on its arguments: the kernel is
        called directly and checks the arguments itself, and its outputs are returned as
        they are (a kernel's outputs are new writeable arrays, `CompiledKernel`): no value
        table, no step loop, no method calls between `run` and the library."""
        kernel = step.kernel
        assert kernel is not None

        def run_whole(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
            try:
                outputs = kernel(inputs)
            except KernelRunError:
                outputs = None
            except CollageError:
                raise
            except Exception as e:  # a backend library failing at run time
                raise _library_error(step, e) from None
            if outputs is None:  # converted, or refused naming @main
                outputs = self._call(step, self._check_inputs(inputs))
            return outputs

        return run_whole

    def kernel_calls(self, inputs: Sequence[np.ndarray]) -> list[KernelCall]:
        """Each kernel call of one run on `inputs`, in order, with its operands."""
        calls: list[KernelCall] = []
        self._run(inputs, None, calls)
        return calls

    def _profiled_run(self, inputs) -> tuple[list, Profile]:
        report = Profile()
        outputs, _, report.total_seconds = clocked(lambda: self._run(inputs, report, None))
        return outputs, report

    def _run(self, inputs, report: Profile | None, calls: list[KernelCall] | None) -> list:
        values: list = [None] * self._num_slots
        values[: len(self._arg_types)] = self._check_inputs(inputs)
        for slot, value in self._constants.items():
            values[slot] = value
        for step in self._steps:
            operands = [values[s] for s in step.operands]
            if calls is not None and step.kernel is not None:
                calls.append(KernelCall(step.op.callee.string_value(), step.kernel.backend,
                                        step.kernel,
                                        flatten(operands) if step.tuples else operands))
            if report is None:
                results = self._execute(step, operands)
            else:
                results, _, seconds = clocked(lambda: self._execute(step, operands))
                if step.kernel is not None:
                    report.kernels.append(KernelTiming(
                        step.op.callee.string_value(), step.kernel.backend, seconds))
                else:
                    report.host_seconds += seconds
            for slot, value in zip(step.results, results):
                values[slot] = value
            for slot in step.dying:
                values[slot] = None
        return [_as_output(values[s]) for s in self._outputs]

    def _execute(self, step: _Step, operands: list) -> list:
        op = step.op
        if step.kernel is None:
            if step.callee is not None:
                return run_function(step.callee, operands)
            return evaluate_op(op, operands)
        if not step.tuples:
            return self._call(step, operands)
        flat = self._call(step, flatten(operands))
        return unflatten([r.type for r in op.results], flat)

    @staticmethod
    def _call(step: _Step, operands: list) -> list:
        assert step.kernel is not None
        try:
            return step.kernel(operands)
        except CollageError:
            raise
        except Exception as e:  # a backend library failing at run time
            raise _library_error(step, e) from None


def _library_error(step: _Step, e: Exception) -> ExecutionError:
    assert step.kernel is not None
    return ExecutionError(f"{step.kernel.backend} kernel {step.op.callee}: "
                          f"{type(e).__name__}: {e}")


def _as_output(value):
    """Outputs the caller may keep and modify: constants and read-only views are copied."""
    if isinstance(value, tuple):
        return tuple(_as_output(v) for v in value)
    return value if value.flags.writeable else value.copy()

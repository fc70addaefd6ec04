"""The executable (`collage_xdsl.runtime.executable`): outlined modules run end to end on
real backends and match the references; profiles, kernel caching, inputs checked, and
alternative plans chosen between at run time.

The MNIST CNN, the MLP and the transformer encoder run with each backend forced alone
(`collage-assign`), partitioned over all three (mock estimator), and with one kernel per
op spread round-robin over all three (every hand-over between libraries), against the
reference interpreter and ONNX Runtime on the whole model. Behind `--full`: the light
model-zoo models the same way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from collage_xdsl.dialects import ir_context
from collage_xdsl.passes.assign import CollageAssignPass
from collage_xdsl.passes.outline import CollageOutlinePass
from example_models import (
    LIGHT,
    MODELS,
    onnxruntime_outputs,
    seeded_inputs,
    with_logits_output,
)
from onnx.backend.test.runner import Runner
from xdsl.context import Context
from xdsl.dialects.builtin import StringAttr
from xdsl.parser import Parser

from collage_xdsl.core.outline import kernel_functions
from collage_xdsl.errors import CollageError
from collage_xdsl.frontend import import_onnx
from collage_xdsl.ir.interpreter import run_module
from collage_xdsl.planner.options import PartitionOptions
from collage_xdsl.planner.pipeline import assign_module, partition_module
from collage_xdsl.runtime import executable as runtime
from collage_xdsl.runtime.additivity import check_additivity
from collage_xdsl.runtime.executable import (
    Executable,
    ExecutionError,
    KernelTiming,
    Profile,
    cached_kernels,
    kernel_key,
    release_cached_kernels,
)

BACKENDS = ("tvm", "onnxruntime", "openvino")
MOCK = PartitionOptions(estimator="mock", mock_costs="tvm:1,onnxruntime:1.1,openvino:1.2",
                        refine_alternatives=2)


@pytest.fixture(scope="module")
def example(example_file):
    """name -> (imported module, seeded inputs, interpreter outputs, onnxruntime outputs)."""
    cache = {}

    def get(name: str):
        if name not in cache:
            model = onnx.load(example_file(name))
            feeds = seeded_inputs(model)
            module = import_onnx(model)
            cache[name] = (module, feeds, run_module(module, feeds),
                           onnxruntime_outputs(model, feeds))
        return cache[name]

    return get


def assert_matches(outputs, *references, rtol=1e-4, atol=1e-5):
    for reference in references:
        assert len(outputs) == len(reference)
        for got, want in zip(outputs, reference):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


def backends_of(module) -> set[str]:
    return {f.attributes["collage.backend"].data for f in kernel_functions(module)}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", MODELS)
def test_model_on_one_backend(example, name, backend):
    module, feeds, reference, ort_outputs = example(name)
    assigned = assign_module(module, backend)
    assert backends_of(assigned) == {backend}
    assert_matches(Executable(assigned).run(feeds), reference, ort_outputs)


@pytest.mark.parametrize("name", MODELS)
def test_model_partitioned_over_all_three(example, name):
    module, feeds, reference, ort_outputs = example(name)
    partitioned = partition_module(module, MOCK)
    assert backends_of(partitioned.module) <= set(BACKENDS)
    assert partitioned.report["functions"][0]["kernels"]
    assert_matches(Executable(partitioned.module).run(feeds), reference, ort_outputs)


@pytest.mark.parametrize("name", MODELS)
def test_kernels_hand_tensors_between_all_three_backends(example, name):
    """One kernel per op, backends round-robin: every library feeds every other."""
    module, feeds, reference, ort_outputs = example(name)
    module = module.clone()
    CollageAssignPass(backend="tvm", fusion="none").apply(Context(), module)
    CollageOutlinePass().apply(Context(), module)
    for i, func in enumerate(kernel_functions(module)):
        func.attributes["collage.backend"] = StringAttr(BACKENDS[i % 3])
    exe = Executable(module)
    outputs, profile = exe.run(feeds, profile=True)
    assert set(profile.by_backend()) == set(BACKENDS)
    assert_matches(outputs, reference, ort_outputs)


def test_a_plan_of_one_library_runs_with_its_defaults_a_mixed_one_shares(example):
    """`policy_for_plan`: every kernel on one backend (alternatives included) -> that
    library's own defaults; kernels of several -> the shared policy."""
    from collage_xdsl.backends.threads import ThreadPolicy

    module = example("mlp")[0]
    alone = ThreadPolicy.library_defaults(2)
    assert runtime.policy_for_plan(assign_module(module, "onnxruntime", "whole"), 2) == alone
    assert runtime.policy_for_plan(assign_module(module, "tvm"), 2) == alone
    mixed = module.clone()
    CollageAssignPass(backend="tvm", fusion="none").apply(Context(), mixed)
    CollageOutlinePass().apply(Context(), mixed)
    kernels = kernel_functions(mixed)
    kernels[-1].attributes["collage.backend"] = StringAttr("openvino")
    assert runtime.plan_backends(mixed) == {"tvm", "openvino"}
    assert runtime.policy_for_plan(mixed, 2) == ThreadPolicy(2, "run")
    assert runtime.policy_for_plan(Parser(context(), TUPLES).parse_module(), 2).spinning == "run"
    plan, _, _ = near_tied_mlp(example)  # an alternative plan's kernels count too
    assert runtime.plan_backends(plan) == {"tvm", "onnxruntime"}
    assert runtime.policy_for_plan(plan, 2) == ThreadPolicy(2, "run")


def test_unpartitioned_module_runs_on_the_host(example):
    module, feeds, reference, _ = example("mlp")
    exe = Executable(module)
    assert exe.kernels == {}
    assert_matches(exe.run(feeds), reference, rtol=0, atol=0)


def test_kernel_regions_are_outlined_on_a_copy(example):
    """A module partitioned but not outlined runs too, and is left as it was."""
    from collage_xdsl.passes.partition import CollagePartitionPass

    module, feeds, reference, _ = example("mnist_cnn")
    module = module.clone()
    CollagePartitionPass(estimator="mock").apply(Context(), module)
    text = str(module)
    assert_matches(Executable(module).run(feeds), reference)
    assert str(module) == text


def test_equal_kernels_compile_once_across_modules(example):
    module, feeds, reference, _ = example("transformer_encoder")
    assigned = assign_module(module, "onnxruntime")
    Executable(assigned)
    before = cached_kernels()
    again = Executable(assign_module(module, "onnxruntime"))  # a new module, equal kernels
    assert cached_kernels() == before
    assert_matches(again.run(feeds), reference)


def test_kernel_key_ignores_names_and_cost():
    ctx = context()
    module = Parser(ctx, """
    func.func private @a(%x: tensor<4xf32>) -> tensor<4xf32> attributes {collage.cost = 1.0 : f64} {
      %r = collage.relu %x : tensor<4xf32>
      func.return %r : tensor<4xf32>
    }
    func.func private @b(%y: tensor<4xf32>) -> tensor<4xf32> {
      %s = collage.relu %y : tensor<4xf32>
      func.return %s : tensor<4xf32>
    }
    func.func private @c(%y: tensor<4xf32>) -> tensor<4xf32> {
      %s = collage.sigmoid %y : tensor<4xf32>
      func.return %s : tensor<4xf32>
    }""").parse_module()
    a, b, c = module.ops
    assert kernel_key(a) == kernel_key(b) != kernel_key(c)



def test_a_profile_is_the_median_of_runs_after_a_first_call(example):
    module, feeds, _, _ = example("transformer_encoder")
    exe = Executable(assign_module(module, "tvm"))
    once, single = exe.run(feeds, profile=True)
    outputs, profile = exe.profile(feeds, runs=5)
    assert [k.function for k in profile.kernels] == [k.function for k in single.kernels]
    assert profile.runs == 5 and profile.first_seconds > 0
    for got, want in zip(outputs, once):
        np.testing.assert_array_equal(got, want)
    assert profile.format().startswith("median of 5 runs after a first call of ")
    with pytest.raises(CollageError, match="at least 1 run, not 0"):
        exe.profile(feeds, runs=0)


def test_profile_median_takes_each_call_and_the_run_apart():
    runs = [Profile([KernelTiming("k", "tvm", s), KernelTiming("j", "tvm", 1.0)],
                            host, total)
            for s, host, total in ((3.0, 0.1, 9.0), (1.0, 0.3, 5.0), (2.0, 0.2, 7.0))]
    mid = runtime.Profile.median(runs, first_seconds=20.0)
    assert [(k.function, k.seconds) for k in mid.kernels] == [("k", 2.0), ("j", 1.0)]
    assert (mid.host_seconds, mid.total_seconds, mid.runs, mid.first_seconds) == (
        0.2, 7.0, 3, 20.0)

def test_profile_times_every_kernel_call(example):
    module, feeds, _, _ = example("transformer_encoder")
    assigned = assign_module(module, "tvm")
    calls = [op for op in assigned.ops if op.sym_name.data == "main"][0].body.block.ops
    n_calls = sum(1 for op in calls if op.name == "func.call")
    outputs, profile = Executable(assigned).run(feeds, profile=True)
    assert len(profile.kernels) == n_calls > 1
    assert {k.backend for k in profile.kernels} == {"tvm"}
    assert sum(k.seconds for k in profile.kernels) <= profile.total_seconds
    table = profile.format()
    assert f"@{profile.kernels[0].function}" in table and "total tvm" in table


TUPLES = """
func.func @main(%x: tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<2x4xf32>) {
  %t = func.call @collage_openvino_split(%x) : (tensor<2x4xf32>) -> tuple<tensor<1x4xf32>, tensor<1x4xf32>>
  %a = collage.get_item %t {index = 1 : i64} : (tuple<tensor<1x4xf32>, tensor<1x4xf32>>) -> tensor<1x4xf32>
  %c = func.call @collage_tvm_concat(%t) : (tuple<tensor<1x4xf32>, tensor<1x4xf32>>) -> tensor<2x4xf32>
  func.return %a, %c : tensor<1x4xf32>, tensor<2x4xf32>
}
func.func private @collage_openvino_split(%x: tensor<2x4xf32>) -> tuple<tensor<1x4xf32>, tensor<1x4xf32>> attributes {collage.backend = "openvino", collage.kernel} {
  %r = collage.relu %x : tensor<2x4xf32>
  %s:2 = collage.split %r {axis = 0 : i64, sizes = array<i64: 1, 1>} : (tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>)
  %t = collage.tuple %s#1, %s#0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tuple<tensor<1x4xf32>, tensor<1x4xf32>>
  func.return %t : tuple<tensor<1x4xf32>, tensor<1x4xf32>>
}
func.func private @collage_tvm_concat(%t: tuple<tensor<1x4xf32>, tensor<1x4xf32>>) -> tensor<2x4xf32> attributes {collage.backend = "tvm", collage.kernel} {
  %c = collage.concat %t {axis = 0 : i64} : (tuple<tensor<1x4xf32>, tensor<1x4xf32>>) -> tensor<2x4xf32>
  func.return %c : tensor<2x4xf32>
}
"""


def context() -> Context:
    return ir_context()


def test_tuples_cross_kernels_and_host_projections():
    module = Parser(context(), TUPLES).parse_module()
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    exe = Executable(module)
    assert sorted(k.backend for k in exe.kernels.values()) == ["openvino", "tvm"]
    outputs, profile = exe.run([x], profile=True)
    assert_matches(outputs, run_module(module, [x]), rtol=0, atol=0)
    relu = np.maximum(x, 0)
    np.testing.assert_array_equal(outputs[1], np.concatenate([relu[1:], relu[:1]]))
    assert len(profile.kernels) == 2


def test_inputs_that_do_not_fit_are_errors(example):
    module, feeds, _, _ = example("mlp")
    exe = Executable(assign_module(module, "onnxruntime"))
    with pytest.raises(ExecutionError, match=r"@main: expected 1 inputs, got 2"):
        exe.run(feeds + feeds)
    with pytest.raises(ExecutionError, match=r"input 0 must be float32\[1, 784\], got float64"):
        exe.run([feeds[0].astype(np.float64)])


def test_a_whole_model_kernel_is_called_directly(example, monkeypatch):
    """One kernel on @main's arguments returning its results: `run` skips the step loop,
    with the same outputs and the same error for a kernel failing at run time."""
    module, feeds, want, _ = example("mlp")
    exe = Executable(assign_module(module, "onnxruntime"))
    assert exe._run_plain != exe._run_steps
    direct = exe.run(feeds)
    stepped, _ = exe.run(feeds, profile=True)  # the step loop
    assert_matches(direct, want)
    np.testing.assert_array_equal(direct[0], stepped[0])
    strided = np.repeat(feeds[0], 2, axis=1)[:, ::2]  # not contiguous: copied by the check
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(exe.run([strided])[0], direct[0])
    with pytest.raises(ExecutionError, match=r"^@main: input 0 must be float32\[1, 784\], got "
                                             r"float64\[1, 784\]$") as error:
        exe.run([feeds[0].tolist()])  # refused naming @main, as the step loop does
    assert error.value.__context__ is None

    class Broken:
        backend = "onnxruntime"

        def __call__(self, inputs):
            raise RuntimeError("session lost")

    monkeypatch.setattr(runtime, "compiled_kernel", lambda backend, func, policy, options: Broken())
    broken = Executable(assign_module(module, "onnxruntime"))
    for profile in (False, True):
        with pytest.raises(ExecutionError, match=r"onnxruntime kernel @\w+: RuntimeError: "
                                                 r"session lost"):
            broken.run(feeds, profile=profile)


def near_tied_mlp(example):
    """The MLP refined with the mock scorer: tvm alone, with onnxruntime alone (the start
    plan, 1.1x) kept as @main.alt1."""
    module, feeds, want, _ = example("mlp")
    refined = partition_module(module, PartitionOptions(**{**MOCK.__dict__, "refine_budget": 5}))
    (function,) = refined.refinement["functions"]
    assert [a["backends"] for a in function["alternatives"]] == [{"onnxruntime": 1}]
    return refined.module, feeds, want


def test_alternative_plans_are_chosen_between_at_run_time(example):
    module, feeds, want = near_tied_mlp(example)
    assert backends_of(module) == {"tvm"}  # the alternative's kernels are not @main's
    exe = Executable(module)
    assert exe.selector is not None and Executable(module, adapt=False).selector is None
    for _ in range(3000):
        assert_matches(exe.run(feeds), want)
    stats = exe.selector.stats()
    assert stats["probes"] >= 1 and all(n > 0 for n in stats["calls"])
    assert sum(stats["calls"]) == 3000
    outputs, profile = exe.run(feeds, profile=True)  # @main's own plan
    assert_matches(outputs, want)
    assert {k.backend for k in profile.kernels} == {"tvm"}
    with pytest.raises(CollageError, match="@main has alternative plans; time its own plan"):
        check_additivity(exe, feeds, rounds=1, calls=1)
    assert check_additivity(Executable(module, adapt=False), feeds, rounds=1, calls=1).run_s > 0


def test_an_alternative_that_no_longer_compiles_is_dropped(example, capsys):
    module, feeds, want = near_tied_mlp(example)
    (kernel,) = [f for f in module.ops if "collage.kernel" in f.attributes
                 and f.attributes["collage.backend"].data == "onnxruntime"]
    kernel.attributes["collage.backend"] = StringAttr("tensorrt")
    exe = Executable(module)
    assert exe.selector is None
    assert "alternative plan @main.alt1 dropped: " in capsys.readouterr().err
    assert_matches(exe.run(feeds), want)


def test_an_alternative_failing_at_run_time_is_dropped(example, capsys, monkeypatch):
    module, feeds, want = near_tied_mlp(example)
    compile_kernel = runtime.compiled_kernel

    class Lost:
        backend = "onnxruntime"

        def __call__(self, inputs):
            raise RuntimeError("session lost")

    monkeypatch.setattr(runtime, "compiled_kernel", lambda backend, func, policy, options: (
        Lost() if backend == "onnxruntime" else compile_kernel(backend, func, policy, options)))
    exe = Executable(module)
    assert exe.selector is not None
    for _ in range(300):
        assert_matches(exe.run(feeds), want)
    (why,) = exe.selector.stats()["dropped"].values()
    assert list(exe.selector.stats()["dropped"]) == ["@main.alt1"]
    assert why.startswith("onnxruntime kernel @") and why.endswith("RuntimeError: session lost")
    assert "collage: alternative plan @main.alt1 dropped at run time: onnxruntime kernel" \
        in capsys.readouterr().err


def test_bad_alternatives_are_errors(example):
    module, _, _ = near_tied_mlp(example)
    main = next(f for f in module.ops if f.sym_name.data == "main")
    main.attributes["collage.alternatives"] = StringAttr("main.alt1")
    with pytest.raises(ExecutionError, match="collage.alternatives must be an array of symbol"):
        Executable(module)


def test_a_kernel_without_backend_is_an_error():
    text = TUPLES.replace('{collage.backend = "tvm", collage.kernel}', "{collage.kernel}")
    with pytest.raises(ExecutionError, match="@collage_tvm_concat has no collage.backend"):
        Executable(Parser(context(), text).parse_module())


@pytest.fixture(scope="module")
def light():
    cache = {}

    def get(case):
        if case.model_name not in cache:
            model = onnx.load(Path(onnx.__file__).parent.parent / case.url)
            outputs = len(model.graph.output)
            model = with_logits_output(model)
            initializers = {i.name for i in model.graph.initializer}
            feeds = [Runner.generate_dummy_data(x, seed=0, name=case.model_name, random=False)
                     for x in model.graph.input if x.name not in initializers]
            checked = slice(outputs, None) if len(model.graph.output) > outputs else slice(None)
            cache[case.model_name] = (import_onnx(model), feeds,
                                      onnxruntime_outputs(model, feeds), checked)
        return cache[case.model_name]

    return get


@pytest.mark.full
@pytest.mark.parametrize("config", [*BACKENDS, "all"])
@pytest.mark.parametrize("case", LIGHT, ids=[case.model_name for case in LIGHT])
def test_light_model(light, case, config):
    """Checked on the logits: the light models' constant weights make all logits equal up
    to rounding and huge, so their softmax is decided by rounding (OpenVINO's differs)."""
    module, feeds, reference, checked = light(case)
    if config == "all":
        module = partition_module(module, MOCK).module
    else:
        module = assign_module(module, config)
    outputs = Executable(module).run(feeds)
    release_cached_kernels()  # the whole set would otherwise hold ~10 GB of kernels
    assert_matches(outputs[checked], reference[checked], rtol=1e-3, atol=1e-4)

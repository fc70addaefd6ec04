"""ModulePasses of collage-xdsl, one module per pass, loaded lazily by name."""

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass

_PASSES: dict[str, tuple[str, str]] = {
    # pass name: (module under collage_xdsl.passes, class name)
    "collage-candidates": ("candidates", "CollageCandidatesPass"),
    "collage-partition": ("partition", "CollagePartitionPass"),
    "collage-outline": ("outline", "CollageOutlinePass"),
    "collage-assign": ("assign", "CollageAssignPass"),
    "collage-fuse-ops": ("fuse_ops", "CollageFuseOpsPass"),
    "collage-partition-for": ("partition_for", "CollagePartitionForPass"),
    "collage-refine": ("refine", "CollageRefinePass"),
    "collage-fold-batch-norm": ("fold_batch_norm", "CollageFoldBatchNormPass"),
    "collage-fold-constants": ("fold_constants", "CollageFoldConstantsPass"),
    "collage-composite-patterns": ("composite_patterns", "CollageCompositePatternsPass"),
    "collage-lower-linalg": ("lower_linalg", "CollageLowerLinalgPass"),
}


def _loader(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    return lambda: getattr(import_module(f"collage_xdsl.passes.{module}"), cls)


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass factories by name, for collage-opt and the xdsl.universe entry point.

    Only passes whose module exists are listed."""
    from importlib.util import find_spec

    return {
        name: _loader(module, cls)
        for name, (module, cls) in _PASSES.items()
        if find_spec(f"collage_xdsl.passes.{module}") is not None
    }

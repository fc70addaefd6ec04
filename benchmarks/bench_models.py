"""The benchmark's model set and where each model's files live in the work directory.

    names = parse_models("mlp,light_resnet50")     # or "modern", "all", or all of MODELS
    path = model_file("light_resnet50", work)      # WORK/models/light_resnet50.onnx
    db, cold = cost_db_files("mlp", work)          # WORK/costs/mlp.sqlite, mlp.cold.json

MODELS: the examples of `examples/make_models.py` (`mnist_cnn`, `mlp`,
`transformer_encoder`, generated) and the light model-zoo models the onnx package ships
(`onnx/backend/test/data/light/light_*.onnx`, copied), named by their file stem
(`light_resnet50`); tables show them without the `light_` prefix. MODERN: the models of
`examples/modern_zoo.py` (generated with their `.ref.npz`), run by `modern` or `all`.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import onnx

from collage_xdsl.errors import CollageError

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))
import modern_zoo  # noqa: E402  (examples/ is not a package)
from make_models import ensure_model  # noqa: E402

LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
EXAMPLES = ("mnist_cnn", "mlp", "transformer_encoder")
LIGHT = tuple(sorted(p.stem for p in LIGHT_DIR.glob("light_*.onnx")))
MODELS = EXAMPLES + LIGHT
MODERN = tuple(modern_zoo.MODELS)
SETS = {"modern": MODERN, "all": MODELS + MODERN}


def display_name(name: str) -> str:
    return name.removeprefix("light_")


def parse_models(text: str) -> list[str]:
    """Model names from `mlp,light_vgg19` (in that order); each must be one of MODELS or
    MODERN, or a set of SETS (`modern`, `all`) that stands for its models."""
    names = [m for n in text.split(",") for m in SETS.get(n.strip(), (n.strip(),))]
    for n in names:
        if n not in SETS["all"]:
            raise CollageError(f"--models: unknown model {n!r} (known: "
                               f"{', '.join(SETS['all'])}, or {' or '.join(SETS)})")
    if len(set(names)) != len(names):
        raise CollageError(f"--models: {text!r} names a model twice")
    return names


def model_file(name: str, work: Path) -> Path:
    """``WORK/models/<name>.onnx``, generated or copied there first if it is missing."""
    directory = work / "models"
    path = directory / f"{name}.onnx"
    if path.exists():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    if name in EXAMPLES:
        return ensure_model(name, directory)
    if name in MODERN:
        return modern_zoo.ensure_model(name, directory)
    tmp = path.with_suffix(".onnx.tmp")
    shutil.copyfile(LIGHT_DIR / f"{name}.onnx", tmp)
    tmp.replace(path)
    return path


def cost_db_files(name: str, work: Path) -> tuple[Path, Path]:
    """The model's cost database and the JSON record of its cold partitioning time."""
    directory = work / "costs"
    return directory / f"{name}.sqlite", directory / f"{name}.cold.json"

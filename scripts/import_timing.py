"""Print import time, op count and printed size / print time for every shipped model.

    python scripts/import_timing.py
"""

import io
import sys
import tempfile
import time
from pathlib import Path

import onnx
from xdsl.printer import Printer

from collage_xdsl.frontend import import_onnx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from make_models import ensure_model  # noqa: E402

LIGHT = Path(onnx.__file__).parent / "backend/test/data/light"


def models(tmp: Path) -> list[tuple[str, Path]]:
    light = [(p.stem.removeprefix("light_"), p) for p in sorted(LIGHT.glob("light_*.onnx"))]
    examples = [(n, ensure_model(n, tmp)) for n in ("mnist_cnn", "mlp", "transformer_encoder")]
    return light + examples


def main() -> None:
    print(f"{'model':<22}{'ops':>6}{'import s':>10}{'print s':>9}{'bytes':>9}{'generic':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in models(Path(tmp)):
            start = time.perf_counter()
            module = import_onnx(path)
            imported = time.perf_counter() - start
            sizes = []
            start = time.perf_counter()
            for generic in (False, True):
                out = io.StringIO()
                Printer(stream=out, print_generic_format=generic).print_op(module)
                sizes.append(len(out.getvalue()))
            printed = (time.perf_counter() - start) / 2
            ops = sum(1 for _ in module.walk()) - 2
            print(f"{name:<22}{ops:>6}{imported:>10.3f}{printed:>9.3f}{sizes[0]:>9}{sizes[1]:>9}")


if __name__ == "__main__":
    main()

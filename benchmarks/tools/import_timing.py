"""Print import time, op count and printed size / print time for every shipped model.

    python benchmarks/tools/import_timing.py

The models are the benchmark's (`benchmarks/bench_models.py`). Per model: ops after
import, seconds of `import_onnx`, seconds of one print (the mean of the custom and the
generic format), and the printed size in bytes in each format.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from collage_xdsl.frontend import import_onnx
from collage_xdsl.measure.timing import clocked

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_models import MODELS, display_name, model_file  # noqa: E402  (not a package)


def printed(module: ModuleOp, generic: bool) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    print(f"{'model':<22}{'ops':>6}{'import s':>10}{'print s':>9}{'bytes':>9}{'generic':>9}")
    with tempfile.TemporaryDirectory() as work:
        for name in MODELS:
            path = model_file(name, Path(work))
            module, _, imported = clocked(lambda: import_onnx(path))
            texts, printing = [], 0.0
            for generic in (False, True):
                text, _, seconds = clocked(lambda g=generic: printed(module, g))
                texts.append(text)
                printing += seconds / 2
            ops = sum(1 for _ in module.walk()) - 2
            print(f"{display_name(name):<22}{ops:>6}{imported:>10.3f}{printing:>9.3f}"
                  f"{len(texts[0]):>9}{len(texts[1]):>9}")


if __name__ == "__main__":
    main()

"""Print import time, node and op counts and printed size / print time of the benchmark's
models.

    python benchmarks/tools/import_timing.py [--models modern] [--work DIR]

The models are the benchmark's (`benchmarks/bench_models.py`, default the twelve of
`run.py`; `modern` or `all` as there), generated into `WORK/models` when missing. Per
model: the ONNX graph's nodes, the ops after import, seconds of `import_onnx`, seconds of
one print (the mean of the custom and the generic format), and the printed size in bytes
in each format.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import onnx

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from collage_xdsl.frontend import import_onnx
from collage_xdsl.measure.timing import clocked

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_models import MODELS, display_name, model_file, parse_models  # noqa: E402

DEFAULT_WORK = Path(__file__).resolve().parents[1] / "work"


def printed(module: ModuleOp, generic: bool) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(module)
    return out.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS),
                        help="models, or modern / all (default: the twelve of run.py)")
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK,
                        help="where the models are generated (default benchmarks/work)")
    args = parser.parse_args(argv)
    print(f"{'model':<22}{'nodes':>6}{'ops':>6}{'import s':>10}{'print s':>9}{'bytes':>11}"
          f"{'generic':>11}")
    for name in parse_models(args.models):
        path = model_file(name, args.work)
        nodes = len(onnx.load(path, load_external_data=False).graph.node)
        module, _, imported = clocked(lambda: import_onnx(path))
        texts, printing = [], 0.0
        for generic in (False, True):
            text, _, seconds = clocked(lambda g=generic: printed(module, g))
            texts.append(text)
            printing += seconds / 2
        ops = sum(1 for _ in module.walk()) - 2
        print(f"{display_name(name):<22}{nodes:>6}{ops:>6}{imported:>10.3f}{printing:>9.3f}"
              f"{len(texts[0]):>11}{len(texts[1]):>11}", flush=True)


if __name__ == "__main__":
    main()

"""lit configuration: the FileCheck suite under tests/filecheck (`lit -v tests/filecheck`).

RUN lines call `collage-opt`, `collage`, `xdsl-opt`, `filecheck` and `python` from the
environment lit itself runs in (its interpreter's bin directory comes first on PATH).
Helper scripts next to the tests (`*.py`) and `inputs/` directories are not tests; lit's scratch files go
to `Output/` directories beside the tests.
"""

import os
import sys

import lit.formats

config.name = "collage-xdsl"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
# Paths given to lit resolve against the directory of this file: `lit tests/filecheck`.
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = config.test_source_root
config.excludes = ["inputs"]  # directories of files that RUN lines read

_bin = os.path.dirname(sys.executable)
config.environment["PATH"] = os.pathsep.join([_bin, config.environment.get("PATH", "")])
for var in ("COLLAGE_WEIGHTS_DIR", "XDG_CACHE_HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

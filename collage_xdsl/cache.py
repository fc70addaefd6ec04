"""Where collage-xdsl keeps what it learns between runs: ``$XDG_CACHE_HOME/collage-xdsl``
(default ``~/.cache/collage-xdsl``), holding the weight store (``weights/``, or
``$COLLAGE_WEIGHTS_DIR``), the cost database (``costs.sqlite``) and the TVM tuning
database (``tvm-tuning/``)."""

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/collage-xdsl``, or ``~/.cache/collage-xdsl``."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "collage-xdsl"

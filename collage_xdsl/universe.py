"""The `xdsl.universe` entry point: stock xdsl-opt sees our dialects and passes."""

from xdsl.universe import Universe

from collage_xdsl.dialects import get_all_dialects
from collage_xdsl.passes import get_all_passes

COLLAGE_UNIVERSE = Universe(all_dialects=get_all_dialects(), all_passes=get_all_passes())

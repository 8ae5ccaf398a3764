"""The layout algebra: where each element of a tile lives (TIRx TileLayout).

Pure Python + numpy (no MLIR).  A TileLayout maps an element's flat
row-major index to a value on each axis: "m" (register slot or buffer
element offset), thread axes (laneid, warpid, wid_in_wg, tid_in_wg, wgid, tx),
tensor memory (TLane, TCol) and cluster CTA ids (cta_x, cta_y, cta_z).
Layouts carry no shape; group, tile_to, permute_by_groups and slice take it.
Text form and grammar: see ``text``; pictures (which thread, register or bank holds each
element): see ``plot``; shared-memory MMA layouts: see ``mma``; the tensor-core
instruction families (mma.sync, wgmma, tcgen05.mma) and their fragments: see ``instructions``.

    >>> from tilemlir.layout import S, TileLayout, laneid
    >>> a_k8 = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)])
    >>> str(a_k8.tile_to((16, 16), (16, 8)))
    'S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]'
"""

from .axes import (AXIS_BOUNDS, AXIS_ORDER, HOLDER_AXES, MEMORY, Axis, Iter, Stride, TCol, TLane, cta_x,
                   cta_y, cta_z, laneid, memory, tid_in_wg, tx, warpid, wgid, wid_in_wg)
from .builders import R, S
from .errors import LayoutError
from .instructions import (MmaSync, Tcgen05Mma, Wgmma, tcgen05_accumulator_layout,
                           wgmma_a_layout, wgmma_accumulator_layout)
from .mma import mma_shared_layout, mma_shared_strides, row_major_layout
from .plot import layout_text, plot_layout
from .swizzle import ELEM_BITS, SWIZZLE_MODES, Swizzle, swizzle_for
from .text import from_attr_text, parse_layout, to_attr_text
from .tile_layout import TileLayout

__all__ = [
    "AXIS_BOUNDS", "AXIS_ORDER", "ELEM_BITS", "HOLDER_AXES", "MEMORY", "SWIZZLE_MODES",
    "Axis", "Iter", "LayoutError", "MmaSync", "R", "S", "Stride", "Swizzle", "Tcgen05Mma",
    "TileLayout", "Wgmma",
    "TCol", "TLane", "cta_x", "cta_y", "cta_z", "laneid", "memory", "tid_in_wg", "tx", "warpid", "wgid",
    "wid_in_wg",
    "from_attr_text", "layout_text", "mma_shared_layout", "mma_shared_strides", "parse_layout",
    "plot_layout", "row_major_layout",
    "swizzle_for", "tcgen05_accumulator_layout", "to_attr_text", "wgmma_a_layout",
    "wgmma_accumulator_layout",
]

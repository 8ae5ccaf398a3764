"""Shared-memory layouts the tensor cores read (wgmma, tcgen05), and plain buffers.

A K-major operand tile has shape (rows, K); "m" counts elements.  Byte
strides, which the shared-memory matrix descriptors are built from:

* swizzled modes, W = 128 / 64 / 32 bytes: the tile is stored as K-chunks of
  W bytes (``W * 8 / elem_bits`` elements) wide.  Inside a chunk, row ``r``
  starts at ``r * W`` bytes (so 8-row groups are ``SBO = 8 * W`` bytes apart);
  chunk ``c`` starts at ``c * rows * W`` bytes (``LBO = rows * W``).  The
  swizzle ``swizzle_for(mode, elem_bits)`` applies on top; its atom is the
  8 rows x W bytes block.
* "none" (interleaved): 8 x 16-byte core matrices of 128 contiguous bytes;
  core matrices along K are ``LBO = 128`` bytes apart, 8-row groups
  ``SBO = K * elem_bits / 8 / 16 * 128`` bytes apart.
"""

import math

from .axes import Iter
from .errors import LayoutError, as_int
from .swizzle import SWIZZLE_BYTES, check_elem_bits, check_mode, swizzle_for
from .tile_layout import TileLayout

CORE_ROWS = 8
CORE_ROW_BYTES = 16
CORE_MATRIX_BYTES = CORE_ROWS * CORE_ROW_BYTES


def mma_shared_strides(elem_bits: int, swizzle_mode: str, shape) -> dict[str, int]:
    """Descriptor strides of a K-major ``shape = (rows, K)`` tile.

    ``lbo_bytes``: between K-chunks (swizzled) or core matrices along K
    ("none"); ``sbo_bytes``: between 8-row groups; ``chunk_elems``: elements
    of K per chunk (swizzled) or per core-matrix row ("none").

    >>> mma_shared_strides(16, "128B", (64, 128))
    {'lbo_bytes': 8192, 'sbo_bytes': 1024, 'chunk_elems': 64}
    """
    bits, mode = check_elem_bits(elem_bits), check_mode(swizzle_mode)
    rows, k = _checked_tile(shape)
    if mode == "none":
        chunk = CORE_ROW_BYTES * 8 // bits
        lbo, sbo = CORE_MATRIX_BYTES, CORE_ROWS * k * bits // 8  # an 8-row group holds 8 full rows
    else:
        width = SWIZZLE_BYTES[mode]
        chunk = width * 8 // bits
        lbo, sbo = rows * width, CORE_ROWS * width
    if rows % CORE_ROWS or k % chunk:
        raise LayoutError(f"{mode} {bits}-bit K-major tile {(rows, k)} needs rows a multiple of {CORE_ROWS} "
                          f"and K a multiple of {chunk}")
    return dict(lbo_bytes=lbo, sbo_bytes=sbo, chunk_elems=chunk)


def mma_shared_layout(elem_bits: int, swizzle_mode: str, shape) -> TileLayout:
    """The layout of a K-major ``shape = (rows, K)`` tile as the tensor cores read it.

    >>> str(mma_shared_layout(16, "128B", (64, 128)))
    'S[(64, 2, 64):(64, 4096, 1)] o Sw<3,3,3>'
    >>> str(mma_shared_layout(16, "none", (16, 32)))
    'S[(2, 8, 4, 8):(256, 8, 64, 1)]'
    """
    chunk = mma_shared_strides(elem_bits, swizzle_mode, shape)["chunk_elems"]
    rows, k = _checked_tile(shape)
    if swizzle_mode == "none":  # (row group, row in group) x (core matrix along K, element in core row)
        shard = [Iter(rows // CORE_ROWS, CORE_ROWS * k), Iter(CORE_ROWS, chunk),
                 Iter(k // chunk, CORE_ROWS * chunk), Iter(chunk, 1)]
    else:  # row x (K-chunk, element in chunk)
        shard = [Iter(rows, chunk), Iter(k // chunk, rows * chunk), Iter(chunk, 1)]
    shard = [it for it in shard if it.extent > 1]
    return TileLayout(shard, swizzle=swizzle_for(swizzle_mode, elem_bits))


def row_major_layout(shape, strides=None) -> TileLayout:
    """A plain strided buffer: one "m" iterator per dim; row-major strides by default.

    >>> str(row_major_layout((4, 8))), str(row_major_layout((4, 8), strides=(16, 1)))
    ('S[(4, 8):(8, 1)]', 'S[(4, 8):(16, 1)]')
    """
    dims = tuple(as_int(d, "shape dim", minimum=1) for d in shape)
    if strides is None:
        strides = [math.prod(dims[d + 1:]) for d in range(len(dims))]
    if len(strides) != len(dims):
        raise LayoutError(f"shape {dims} and strides {tuple(strides)} have different ranks")
    return TileLayout([Iter(d, s) for d, s in zip(dims, strides)])


def _checked_tile(shape) -> tuple[int, int]:
    dims = tuple(as_int(d, "tile dim", minimum=1) for d in shape)
    if len(dims) != 2:
        raise LayoutError(f"a K-major MMA tile has shape (rows, K), got {dims}")
    return dims

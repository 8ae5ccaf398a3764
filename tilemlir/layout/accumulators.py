"""Where the asynchronous tensor-core MMAs keep their accumulator: layout constructors.

Two public constructors, for the kernel language (exported by tilemlir.lang) and for the
variants' checks:

* ``wgmma_accumulator_layout(m, n)``: the register fragment of ``wgmma.mma_async .m64nNk16``
  with an f32 accumulator (PTX ISA, "Register Fragments and Shared Memory Matrix Layouts",
  matrix D of ``.m64nNk16``), for ``m / 64`` instructions stacked along M. Thread
  ``t = 32 * w + l`` of the warpgroup holds, in register ``i`` of the instruction's ``N / 2``
  accumulator registers (the order of the fields of the nvvm op's result struct)::

      row = 16 * w + l / 4 + 8 * ((i / 2) % 2)        col = 8 * (i / 4) + 2 * (l % 4) + i % 2

  and the registers of M-block ``b`` (rows ``64 b .. 64 b + 63``) follow those of block
  ``b - 1``: slot ``b * N / 2 + i``.

      >>> str(wgmma_accumulator_layout(64, 16))
      'S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]'

* ``tcgen05_accumulator_layout(m, n, cta_group)``: the tensor-memory lanes and columns that
  ``tcgen05.mma`` of instruction shape ``m x n`` writes, per the PTX ISA "Data Path Layout
  Organization" (one CTA's view: with cta_group 2 each CTA of the pair holds ``m / 2`` rows)::

      M = 128, cta_group 1 (layout D)   row r -> lane r, column c -> column c
      M = 256, cta_group 2 (layout A)   per CTA: as layout D over its 128 rows
      M = 64,  cta_group 1 (layout F)   row r -> lane 32 * (r / 16) + r % 16 (half datapath)
      M = 128, cta_group 2 (layout B)   per CTA, 64 rows; columns c >= n / 2 go to lane
                                        r + 64, column c - n / 2

      >>> str(tcgen05_accumulator_layout(64, 32))
      'S[(4, 16, 32):(32@TLane, 1@TLane, 1@TCol)]'

Both return layouts relative to the accumulator's first element (no offsets).
"""

from __future__ import annotations

from .axes import Iter
from .errors import LayoutError
from .tile_layout import TileLayout

WGMMA_M = 64


def wgmma_accumulator_layout(m: int, n: int) -> TileLayout:
    """The (m, n) f32 accumulator of ``m / 64`` wgmma .m64nNk16 instructions, in registers."""
    if not isinstance(m, int) or m <= 0 or m % WGMMA_M:
        raise LayoutError(f"a wgmma accumulator has M a positive multiple of 64, got {m!r}")
    if not isinstance(n, int) or n % 8 or not 8 <= n <= 256:
        raise LayoutError(f"a wgmma accumulator has N a multiple of 8 in [8, 256], got {n!r}")
    rows = [Iter(m // WGMMA_M, n // 2),          # M-block: the next n/2 registers
            Iter(4, 1, "wid_in_wg"),             # 16-row slab of each warp
            Iter(2, 2),                          # rows +8: registers {2, 3} of each group of 4
            Iter(8, 4, "laneid")]                # row in the 8-row group: lane / 4
    cols = [Iter(n // 8, 4),                     # 8-column group: 4 registers each
            Iter(4, 1, "laneid"),                # column pair: lane % 4
            Iter(2, 1)]                          # the pair's two columns: consecutive registers
    return TileLayout([it for it in rows + cols if it.extent > 1])


def tcgen05_accumulator_layout(m: int, n: int, cta_group: int = 1) -> TileLayout:
    """The TMEM (lane, column) layout of a tcgen05.mma accumulator, one CTA's rows."""
    if cta_group not in (1, 2):
        raise LayoutError(f"cta_group must be 1 or 2, got {cta_group!r}")
    if not isinstance(n, int) or n <= 0 or n % (8 * cta_group):
        raise LayoutError(f"a tcgen05 accumulator has N a positive multiple of "
                          f"{8 * cta_group}, got {n!r}")
    if (m, cta_group) in ((128, 1), (256, 2)):
        shard = [Iter(128, 1, "TLane"), Iter(n, 1, "TCol")]
    elif (m, cta_group) == (64, 1):
        shard = [Iter(4, 32, "TLane"), Iter(16, 1, "TLane"), Iter(n, 1, "TCol")]
    elif (m, cta_group) == (128, 2):
        shard = [Iter(64, 1, "TLane"), Iter(2, 64, "TLane"), Iter(n // 2, 1, "TCol")]
    else:
        legal = "64 or 128" if cta_group == 1 else "128 or 256"
        raise LayoutError(f"tcgen05.mma with cta_group {cta_group} has M {legal}, got {m!r}")
    return TileLayout(shard)


def tcgen05_lane_alignments(m: int, cta_group: int = 1) -> tuple[int, ...]:
    """The TMEM lanes the accumulator may start at ("Tensor Memory Datapath Lane Alignment")."""
    return (0, 16) if (m, cta_group) == (64, 1) else (0,)

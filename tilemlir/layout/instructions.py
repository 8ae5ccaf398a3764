"""The tensor-core instruction families, one frozen class each (CUTLASS's CuTe DSL
``cutlass/cute/nvgpu/warp/mma.py`` is the model): its legal shapes and input types, checked
once when the object is made (LayoutError with the reason), and where each element of its
operands lives, as numpy arrays for the lowerings' checks and as layouts for kernels.

    MmaSync(k, input_type)        mma.sync.aligned.m16n8k{8,16}: a warp, fragments in registers
    Wgmma(n, ab_type)             wgmma.mma_async.m64nNk*: a warpgroup, f32 accumulator in registers
    Tcgen05Mma(m, n, cta_group)   tcgen05.mma: one thread, accumulator in tensor memory

The shape rules also answer with a reason string (None when legal), which a lowering turns into
a rejection. ``wgmma_accumulator_layout``, ``wgmma_a_layout`` (wgmma's A in registers) and
``tcgen05_accumulator_layout`` are the kernel language's names for the fragment layouts
(exported by tilemlir.lang).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

import numpy as np

from .axes import Iter
from .errors import LayoutError
from .tile_layout import TileLayout


# ------------------------------------------------------------------------------ mma.sync
# The m16n8 atoms of the PTX ISA ("Matrix fragments for mma.m16n8k16 / m16n8k8"): C/D (16 x 8)
# and A at k8 share one layout; B at k8 is 8 x 8 (K x N). The k16 atoms are two k8 ones.
_C_ATOM = TileLayout([Iter(2, 2), Iter(8, 4, "laneid"), Iter(4, 1, "laneid"), Iter(2, 1)])
_B_K8_ATOM = TileLayout([Iter(4, 1, "laneid"), Iter(2, 1), Iter(8, 4, "laneid")])


@dataclass(frozen=True)
class MmaSync:
    """mma.sync.aligned.m16n8k<k>.row.col.f32.<in>.<in>.f32: a warp multiplies a 16 x k A by a
    k x 8 B, the 16-bit inputs packed two per b32 register.

    The fragment methods give, over the atom, (lane, position) arrays: position is the element's
    index in the operand's register list (for A and B: 2 * register + half, low half first).
    The layout methods say the same as layouts, slot = position.

    >>> str(MmaSync(16).a_layout())
    'S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]'
    >>> MmaSync(32)
    Traceback (most recent call last):
    ...
    tilemlir.layout.errors.LayoutError: mma.sync m16n8 with 16-bit inputs has K 8 or 16, got 32
    """
    k: int
    input_type: str = "f16"
    m: ClassVar[int] = 16
    n: ClassVar[int] = 8
    accumulator: ClassVar[str] = "f32"

    def __post_init__(self):
        if self.k not in (8, 16):
            raise LayoutError(f"mma.sync m16n8 with 16-bit inputs has K 8 or 16, got {self.k!r}")
        if self.input_type not in ("f16", "bf16"):
            raise LayoutError(f"mma.sync {self.name} takes f16 or bf16 inputs, "
                              f"got {self.input_type!r}")

    @property
    def name(self) -> str:
        """The shape's name: "m16n8k16" or "m16n8k8"."""
        return f"m{self.m}n{self.n}k{self.k}"

    @property
    def a_registers(self) -> int:
        """b32 registers of A per lane: 4 at k16, 2 at k8."""
        return self.m * self.k // 64      # b32 registers per lane: k16 -> 4, k8 -> 2

    @property
    def b_registers(self) -> int:
        """b32 registers of B per lane: 2 at k16, 1 at k8."""
        return self.k * self.n // 64      # k16 -> 2, k8 -> 1

    def a_fragment(self):
        """(lane, position) arrays over the (16, k) A atom (the PTX ISA figure)."""
        r, c = np.indices((self.m, self.k))
        lane = (r % 8) * 4 + (c % 8) // 2
        reg = (c // 8) * 2 + r // 8
        return lane, reg * 2 + c % 2

    def b_fragment(self):
        """(lane, position) arrays over the (k, 8) B atom (the PTX ISA figure)."""
        kk, n = np.indices((self.k, self.n))
        lane = n * 4 + (kk % 8) // 2
        return lane, (kk // 8) * 2 + kk % 2

    def c_fragment(self):
        """(lane, position) arrays over the (16, 8) C/D atom (the PTX ISA figure)."""
        r, c = np.indices((self.m, self.n))
        return (r % 8) * 4 + c // 2, (r // 8) * 2 + c % 2

    def a_layout(self) -> TileLayout:
        """The (16, k) A atom as a register layout (slot = position)."""
        return _C_ATOM if self.k == 8 else _C_ATOM.tile_to([16, 16], [16, 8])

    def b_layout(self) -> TileLayout:
        """The (k, 8) B atom as a register layout (slot = position)."""
        return _B_K8_ATOM if self.k == 8 else _B_K8_ATOM.tile_to([16, 8], [8, 8])

    def c_layout(self) -> TileLayout:
        """The (16, 8) C/D atom as a register layout (slot = position)."""
        return _C_ATOM

    def fragments(self, m: int, n: int, k: int) -> tuple[TileLayout, TileLayout, TileLayout]:
        """Register layouts of A (m x k), B (k x n) and C/D (m x n) of one warp computing the
        whole tile: the atoms repeated over it.

        >>> a, b, c = MmaSync(8).fragments(16, 16, 8)
        >>> str(b), str(c)
        ('S[(4, 2, 2, 8):(1@laneid, 1, 2, 4@laneid)]', 'S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]')
        """
        bad = [f"{name}={v} is not a multiple of {q}"
               for name, v, q in (("M", m, self.m), ("N", n, self.n), ("K", k, self.k)) if v % q]
        if bad:
            raise LayoutError(f"mma.sync {self.name} tiles: {'; '.join(bad)}")
        return (self.a_layout().tile_to([m, k], [self.m, self.k]),
                self.b_layout().tile_to([k, n], [self.k, self.n]),
                self.c_layout().tile_to([m, n], [self.m, self.n]))


# The shapes a lowering tries, k16 before k8.
MMA_SYNC = (MmaSync(16, "f16"), MmaSync(16, "bf16"), MmaSync(8, "f16"), MmaSync(8, "bf16"))


# ------------------------------------------------------------------------------ wgmma
_WGMMA_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "s8": 32, "u8": 32}
# The wgmma input type of each element type a kernel's tiles hold (MLIR spelling) that the
# lowerings give it: the 16-bit floats and the 8-bit ones (kind f8: e4m3 / e5m2).
WGMMA_AB_TYPES = {"f16": "f16", "bf16": "bf16", "f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}
_F8_KINDS = ("e4m3", "e5m2")


@dataclass(frozen=True)
class Wgmma:
    """wgmma.mma_async.sync.aligned.m64n<n>k<K>: a warpgroup multiplies A (64 x K) by B (K x n)
    into an f32 accumulator in registers; K is fixed by the input type.

    Thread ``t = 32 * w + l`` of the warpgroup holds, in register ``i`` of the instruction's
    ``n / 2`` accumulator registers (the order of the fields of the nvvm op's result struct)::

        row = 16 * w + l / 4 + 8 * ((i / 2) % 2)        col = 8 * (i / 4) + 2 * (l % 4) + i % 2

    An M x n accumulator (M a multiple of 64) is M / 64 instructions stacked along M, the
    registers of block ``b`` (rows ``64 b .. 64 b + 63``) after those of block ``b - 1``.

    >>> Wgmma(260)
    Traceback (most recent call last):
    ...
    tilemlir.layout.errors.LayoutError: wgmma takes N a multiple of 8 in [8, 256], got N=260
    """
    n: int
    ab_type: str = "f16"
    m: ClassVar[int] = 64

    def __post_init__(self):
        reason = self.shape_error(self.m, self.n, _WGMMA_K.get(self.ab_type), self.ab_type)
        if reason:
            raise LayoutError(reason)

    @property
    def k(self) -> int:
        """K of one instruction: 16 for f16 / bf16, 8 for tf32, 32 for 8-bit inputs."""
        return _WGMMA_K[self.ab_type]

    @staticmethod
    def input_error(a_type: str, b_type: str, transpose_b: bool = False) -> Optional[str]:
        """Why wgmma cannot multiply A of `a_type` by B of `b_type` (wgmma names: "f16",
        "e4m3", ...), B MN-major when `transpose_b`, or None.

        PTX ISA 9.7.15.5 (wgmma.mma_async): f16 and bf16 take A and B of one type, either
        K-major or MN-major (imm-trans-a / imm-trans-b); kind f8 takes any of e4m3 and e5m2 for
        each operand, both K-major only (the transposes exist for .f16 / .bf16 alone), K = 32
        per instruction: 32 bytes of K, as for the 16-bit kinds.

        >>> Wgmma.input_error("e4m3", "e5m2") is None
        True
        >>> Wgmma.input_error("e4m3", "e4m3", transpose_b=True).split(":")[0]
        'wgmma reads 8-bit operands K-major only'
        """
        f8 = [t in _F8_KINDS for t in (a_type, b_type)]
        if all(f8):
            if transpose_b:
                return (f"wgmma reads 8-bit operands K-major only: B ({b_type}) cannot be "
                        f"MN-major (transpose_b); store it N x K")
            return None
        if any(f8):
            return (f"A is {a_type} but B is {b_type}: kind f8 takes 8-bit floats (e4m3, e5m2) "
                    f"for both")
        if a_type != b_type:
            return f"A is {a_type} but B is {b_type}: inputs must have one type"
        return None

    @staticmethod
    def shape_error(m: int, n: int, k: int, ab_type: str = "f16") -> Optional[str]:
        """Why ``wgmma.mma_async.m{m}n{n}k{k}`` with A/B of ``ab_type`` is illegal, or None.

        PTX ISA 9.7.15.2 (wgmma "Matrix Shape"): M = 64; K = 16 (f16/bf16), 8 (tf32),
        32 (e4m3/e5m2/s8/u8); N in {8, 16, ..., 256} for the floating-point kinds;
        the integer kinds take N in {8, 16, 24, 32, 48, ..., 256} (multiples of 16 above 32).
        """
        if ab_type not in _WGMMA_K:
            return f"ab_type must be one of {tuple(_WGMMA_K)}, got {ab_type!r}"
        if m != 64:
            return f"wgmma takes M=64, got M={m}"
        if k != _WGMMA_K[ab_type]:
            return f"wgmma with {ab_type} inputs takes K={_WGMMA_K[ab_type]}, got K={k}"
        if not isinstance(n, int) or n % 8 or not 8 <= n <= 256:
            return f"wgmma takes N a multiple of 8 in [8, 256], got N={n}"
        if ab_type in ("s8", "u8") and n > 32 and n % 16:
            return f"integer wgmma takes N a multiple of 16 above 32, got N={n}"
        return None

    def _check_rows(self, m: int) -> None:
        if not isinstance(m, int) or m <= 0 or m % self.m:
            raise LayoutError(f"a wgmma accumulator has M a positive multiple of 64, got {m!r}")

    def accumulator_fragment(self, m: int):
        """(lane, warp, M block, register) arrays over the (m, n) accumulator."""
        self._check_rows(m)
        return accumulator_fragment(m, self.n)

    def accumulator_layout(self, m: int) -> TileLayout:
        """The (m, n) accumulator in registers, as a layout (slot = block * n / 2 + register)."""
        self._check_rows(m)
        return _fragment_layout(m, self.n)

    @classmethod
    def a_fragment(cls, m: int, k: int):
        """(lane, warp, M block, K step, position) arrays over an (m, k) A held in registers.

        A wgmma whose A comes from registers (16-bit inputs) reads, per K step of 16, four b32
        registers of each thread, each two elements: position ``p`` (0..7) is half ``p % 2`` of
        register ``p / 2``. Thread ``t = 32 * w + l`` holds, at position ``p`` of step ``j``::

            row = 16 * w + l / 4 + 8 * ((p / 2) % 2)
            col = 16 * j + 8 * (p / 4) + 2 * (l % 4) + p % 2

        which is the accumulator's formula with register ``8 * j + p``: the f32 accumulator of
        an m64nK wgmma holds in each thread exactly the elements that thread holds of A.
        """
        _check_a_shape(m, k)
        r, c = np.indices((m, k))
        row, col = r % cls.m, c % 16
        lane = (row % 8) * 4 + (col % 8) // 2
        position = (col // 8) * 4 + ((row % 16) // 8) * 2 + col % 2
        return lane, row // 16, r // cls.m, c // 16, position


def accumulator_fragment(m: int, n: int):
    """(lane, warp, M block, register) arrays over an (m, n) accumulator of wgmma instructions:
    Wgmma's formula, which for n above 256 (several instructions along N, each n_i columns
    wide, a multiple of 8) numbers the registers of the instruction at column c0 from c0 / 2."""
    r, c = np.indices((m, n))
    row = r % Wgmma.m
    lane = (row % 8) * 4 + (c % 8) // 2
    warp = row // 16
    register = (c // 8) * 4 + ((row % 16) // 8) * 2 + c % 2
    return lane, warp, r // Wgmma.m, register


def _fragment_layout(m: int, n: int) -> TileLayout:
    """The (m, n) wgmma register fragment: slot = (m block) * n / 2 + register."""
    rows = [Iter(m // Wgmma.m, n // 2),          # M-block: the next n/2 registers
            Iter(4, 1, "wid_in_wg"),             # 16-row slab of each warp
            Iter(2, 2),                          # rows +8: registers {2, 3} of each group of 4
            Iter(8, 4, "laneid")]                # row in the 8-row group: lane / 4
    cols = [Iter(n // 8, 4),                     # 8-column group: 4 registers each
            Iter(4, 1, "laneid"),                # column pair: lane % 4
            Iter(2, 1)]                          # the pair's two columns: consecutive registers
    return TileLayout([it for it in rows + cols if it.extent > 1])


def _check_a_shape(m: int, k: int) -> None:
    if not isinstance(m, int) or m <= 0 or m % Wgmma.m:
        raise LayoutError(f"a wgmma A in registers has M a positive multiple of 64, got {m!r}")
    if not isinstance(k, int) or k <= 0 or k % 16:
        raise LayoutError(f"a wgmma A in registers has K a positive multiple of 16 (16-bit "
                          f"inputs), got {k!r}")


def wgmma_a_layout(m: int, k: int) -> TileLayout:
    """The (m, k) 16-bit A operand of ``m / 64`` x ``k / 16`` wgmma .m64nNk16 instructions, in
    registers: slot = (m block) * k / 2 + 8 * (k step) + position (Wgmma.a_fragment).

    It is the accumulator layout with k columns, so an f32 accumulator of N columns cast to
    f16 / bf16 in place is the A of the next wgmma with K = N (attention's P . V):

    >>> wgmma_a_layout(64, 64) == wgmma_accumulator_layout(64, 64)
    True
    >>> str(wgmma_a_layout(64, 16))
    'S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]'
    """
    _check_a_shape(m, k)
    return _fragment_layout(m, k)


def wgmma_accumulator_layout(m: int, n: int) -> TileLayout:
    """The (m, n) f32 accumulator of ``m / 64`` wgmma .m64nNk16 instructions, in registers.
    N above 256 is several instructions along N (accumulator_fragment): the layout of the whole
    is the formula's, so a column window of a chunk's width is that chunk's accumulator.

    >>> str(wgmma_accumulator_layout(64, 16))
    'S[(4, 2, 8, 2, 4, 2):(1@wid_in_wg, 2, 4@laneid, 4, 1@laneid, 1)]'
    >>> wgmma_accumulator_layout(64, 320) == _fragment_layout(64, 320)
    True
    """
    if isinstance(n, int) and n > 256 and n % 8 == 0:
        Wgmma(8)._check_rows(m)
        return _fragment_layout(m, n)
    return Wgmma(n).accumulator_layout(m)


# ------------------------------------------------------------------------------ tcgen05.mma
_TCGEN05_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32}  # dense K per kind


@dataclass(frozen=True)
class Tcgen05Mma:
    """tcgen05.mma.cta_group::<cta_group>.kind::<kind> (dense, no ``.ws``): one thread issues
    an m x n MMA (m over the CTA pair with cta_group 2) whose accumulator is in tensor memory.

    The accumulator's lanes and columns, per the PTX ISA "Data Path Layout Organization" (one
    CTA's view: with cta_group 2 each CTA of the pair holds ``m / 2`` rows)::

        M = 128, cta_group 1 (layout D)   row r -> lane r, column c -> column c
        M = 256, cta_group 2 (layout A)   per CTA: as layout D over its 128 rows
        M = 64,  cta_group 1 (layout F)   row r -> lane 32 * (r / 16) + r % 16 (half datapath)
        M = 128, cta_group 2 (layout B)   per CTA, 64 rows; columns c >= n / 2 go to lane
                                          r + 64, column c - n / 2

    >>> str(Tcgen05Mma(64, 32).accumulator_layout())
    'S[(4, 16, 32):(32@TLane, 1@TLane, 1@TCol)]'
    """
    m: int
    n: int
    cta_group: int = 1
    kind: str = "f16"

    def __post_init__(self):
        reason = self.shape_error(self.m, self.n, cta_group=self.cta_group, kind=self.kind)
        if reason:
            raise LayoutError(reason)

    @staticmethod
    def shape_error(m: int, n: int, *, cta_group: int = 1, kind: str = "f16",
                    a_in_tmem: bool = False) -> Optional[str]:
        """Why ``tcgen05.mma.cta_group::<cta_group>.kind::<kind>`` (dense, no ``.ws``)
        cannot have shape M x N, or ``None`` when it can.

        PTX ISA 9.7.16.2.1 "Matrix Shape", Table "Various combinations of .kind and
        shapes" (kind::f16, ::tf32, ::f8f6f4)::

            cta_group::1: M in {64, 128},  N in {8, 16, ..., 256}   (steps of 8)
            cta_group::2: M in {128, 256}, N in {16, 32, ..., 256}  (steps of 16)

        K is fixed per kind (16 f16/bf16, 8 tf32, 32 f8f6f4; twice that when sparse).
        With A in tensor memory (``a_in_tmem``) CUTLASS additionally requires N a
        multiple of 16 for M = 128 (``SM100_MMA_*_TS`` static_asserts); that rule is
        applied here too.  kind::i8 has its own N steps and is not modelled.
        """
        if kind not in _TCGEN05_K:
            return f"kind must be one of {tuple(_TCGEN05_K)}, got {kind!r}"
        if kind == "i8":
            return "kind::i8 shapes are not modelled here"
        if cta_group not in (1, 2):
            return f"cta_group must be 1 or 2, got {cta_group!r}"
        if not isinstance(m, int) or not isinstance(n, int):
            return f"M and N must be ints, got {m!r} and {n!r}"
        legal_m = (64, 128) if cta_group == 1 else (128, 256)
        if m not in legal_m:
            return f"cta_group::{cta_group} kind::{kind} takes M in {legal_m}, got M={m}"
        step = 8 if cta_group == 1 else 16
        if n % step or not step <= n <= 256:
            return (f"cta_group::{cta_group} kind::{kind} takes N a multiple of {step} in "
                    f"[{step}, 256], got N={n}")
        if a_in_tmem and cta_group == 1 and m == 128 and n % 16:
            return f"A in tensor memory with M=128 takes N a multiple of 16, got N={n}"
        return None

    def accumulator_layout(self) -> TileLayout:
        """The TMEM (lane, column) layout of the accumulator, one CTA's rows, relative to its
        first element."""
        m, n = self.m, self.n
        if (m, self.cta_group) in ((128, 1), (256, 2)):
            shard = [Iter(128, 1, "TLane"), Iter(n, 1, "TCol")]
        elif (m, self.cta_group) == (64, 1):
            shard = [Iter(4, 32, "TLane"), Iter(16, 1, "TLane"), Iter(n, 1, "TCol")]
        else:   # (128, 2)
            shard = [Iter(64, 1, "TLane"), Iter(2, 64, "TLane"), Iter(n // 2, 1, "TCol")]
        return TileLayout(shard)

    @property
    def lane_alignments(self) -> tuple[int, ...]:
        """The TMEM lanes the accumulator may start at ("Tensor Memory Datapath Lane
        Alignment")."""
        return (0, 16) if (self.m, self.cta_group) == (64, 1) else (0,)


def tcgen05_accumulator_layout(m: int, n: int, cta_group: int = 1) -> TileLayout:
    """The TMEM (lane, column) layout of a tcgen05.mma accumulator, one CTA's rows."""
    return Tcgen05Mma(m, n, cta_group).accumulator_layout()

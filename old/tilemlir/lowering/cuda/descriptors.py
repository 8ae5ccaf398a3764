"""Tensor-core descriptors: pure-Python encoders (ints in, 64-bit / 32-bit ints out).

* :class:`WgmmaSmemDescriptor` -- the Hopper ``wgmma.mma_async`` shared-memory
  matrix descriptor (sm_90a), PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format".
* :class:`Tcgen05SmemDescriptor` -- the Blackwell ``tcgen05.mma`` shared-memory
  descriptor (sm_100a), PTX ISA 9.7.16.4.1 "Shared Memory Descriptor".
* :class:`Tcgen05InstrDescriptor` -- the 32-bit ``tcgen05.mma`` instruction
  descriptor, PTX ISA 9.7.16.4.2 "Instruction Descriptor", Table "Instruction
  descriptor format for .kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8".
* :class:`KMajorTile`, :func:`kmajor_smem_descriptor`, :func:`advance_descriptor`
  -- fill a descriptor from a K-major tile in shared memory and step it along K.
* :class:`MNMajorTile` -- the same for an MN-major (K x MN, MN contiguous) tile, wgmma's
  ``imm-trans`` = 1 operands (attention's V as B).

Section numbers are those of PTX ISA 8.7/8.8/9.0; the anchors on
docs.nvidia.com/cuda/parallel-thread-execution are
``#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor``,
``#tcgen05-shared-memory-descriptor`` and ``#tcgen05-instruction-descriptor``.

The values here are what goes into the 64-bit (``.b64``) descriptor register of
the instruction; the start-address field is the low 14 bits of both shared-memory
descriptor formats, so a kernel adds a runtime ``(smem_addr & 0x3FFFF) >> 4`` to
a constant built here with the tile's address taken as 0 (the constant's start
field then holds only a K offset; OR works too when that is 0).  See
docs/notes/nvvm-builders.md, "Shared-memory address for descriptors".

Verification: the wgmma encoding, :class:`KMajorTile` (all four swizzle modes)
and the K step ran on an H200 through wgmma (nvvm-builders.md, "Hardware
check"); :class:`MNMajorTile` is checked against the PTX ISA canonical MN-major
layouts and CUTLASS's make_gmma_desc<Major::MN> (its GPU tests are in
test_gemm_async_operands_gpu.py); the tcgen05 encodings are checked against the PTX ISA tables, CUTLASS's
bitfields and upstream NVVM's ``tcgen05.mma_smem_desc`` (no sm_100 GPU here).

Encoders validate their fields: ``check()`` returns a reason string (or ``None``),
``encode()`` raises :class:`DescriptorError` (a ``ValueError``) with that reason.
Nothing here asserts.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Optional

from tilemlir.layout.instructions import Tcgen05Mma

__all__ = [
    "DescriptorError",
    "MMA_K_STEP_BYTES",
    "SWIZZLE_REPEAT_BYTES",
    "WGMMA_SWIZZLE_CODES",
    "TCGEN05_SWIZZLE_CODES",
    "TCGEN05_IDESC_TYPES",
    "matrix_descriptor_encode",
    "swizzle_base_offset",
    "WgmmaSmemDescriptor",
    "Tcgen05SmemDescriptor",
    "Tcgen05InstrDescriptor",
    "KMajorTile",
    "MNMajorTile",
    "kmajor_smem_descriptor",
    "advance_descriptor",
    "descriptor_start_address",
]


class DescriptorError(ValueError):
    """A descriptor field out of range or not encodable; the message says which."""


# --------------------------------------------------------------------------------------
# Shared pieces
# --------------------------------------------------------------------------------------

#: Bytes one dense MMA-K step reads along K of a K-major operand, for every dense
#: kind: 16 x 16-bit (f16/bf16, K=16), 8 x 32-bit (tf32, K=8), 32 x 8-bit (K=32).
MMA_K_STEP_BYTES = 32

#: Address period of each swizzle pattern (PTX ISA, the table "Starting address of
#: repeating pattern for various swizzling modes" in both descriptor sections):
#: a pattern that starts on such a boundary has matrix base offset 0.
SWIZZLE_REPEAT_BYTES = {"128B": 1024, "64B": 512, "32B": 256}

#: Swizzle field (bits 62-63) of the wgmma descriptor.  "none" is the
#: interleaved (no-swizzle) canonical layout, CUTLASS ``GMMA::LayoutType::INTERLEAVE``.
WGMMA_SWIZZLE_CODES = {"none": 0, "128B": 1, "64B": 2, "32B": 3}

#: Swizzle field (bits 61-63) of the tcgen05 descriptor; 3, 5 and 7 are invalid.
#: Note each Hopper 2-bit code c is the 3-bit code 2*c here (bit 61 is new: the
#: 128B swizzle with 32-byte atomicity).
TCGEN05_SWIZZLE_CODES = {"none": 0, "128B_base32B": 1, "128B": 2, "64B": 4, "32B": 6}

_ADDR_WINDOW = 1 << 18  # matrix-descriptor-encode keeps address bits 4..17
_FIELD14 = (1 << 14) - 1


def matrix_descriptor_encode(x: int) -> int:
    """PTX ISA ``matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4`` (both descriptor formats)."""
    return (int(x) & 0x3FFFF) >> 4


def swizzle_base_offset(pattern_start: int, swizzle: str) -> int:
    """The "matrix base offset" field for a swizzle pattern starting at byte ``pattern_start``.

    PTX ISA (both descriptor sections): 0 when the repeating pattern starts on its
    boundary (1024 / 512 / 256 bytes for 128B / 64B / 32B swizzle), otherwise
    ``(pattern start addr >> 0x7) & 0x7``.  "none" has no pattern: 0.
    """
    rep = SWIZZLE_REPEAT_BYTES.get(_canon_swizzle(swizzle))
    if rep is None or int(pattern_start) % rep == 0:
        return 0
    return (int(pattern_start) >> 7) & 0x7


def _canon_swizzle(swizzle: str) -> str:
    return "128B" if swizzle == "128B_base32B" else swizzle


def _as_int(value) -> Optional[int]:
    """``value`` as an int (numpy integers too), or None for non-integers and bools."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _addr_reason(name: str, value: int) -> Optional[str]:
    if _as_int(value) is None:
        return f"{name} must be an int, got {value!r}"
    value = _as_int(value)
    if value < 0:
        return f"{name} must be >= 0, got {value}"
    if value % 16:
        return f"{name} must be 16-byte aligned, got {value}"
    if value >= _ADDR_WINDOW:
        return f"{name} = {value} does not fit the 14-bit (x & 0x3FFFF) >> 4 field (max {_ADDR_WINDOW - 16})"
    return None


def _small_reason(name: str, value: int, bits: int) -> Optional[str]:
    if _as_int(value) is None and not isinstance(value, bool):
        return f"{name} must be an int, got {value!r}"
    if not 0 <= int(value) < (1 << bits):
        return f"{name} must be in [0, {(1 << bits) - 1}], got {value}"
    return None


def _first(*reasons: Optional[str]) -> Optional[str]:
    return next((r for r in reasons if r), None)


# --------------------------------------------------------------------------------------
# Hopper wgmma shared-memory matrix descriptor (sm_90a)
# --------------------------------------------------------------------------------------


def _address_reasons(desc) -> tuple:
    """Why the start address or the byte offsets of a shared-memory descriptor cannot be encoded."""
    return (_addr_reason("start_address", desc.start_address),
            _addr_reason("leading_byte_offset", desc.leading_byte_offset),
            _addr_reason("stride_byte_offset", desc.stride_byte_offset))


def _address_fields(desc) -> int:
    """Bits 0-13 (start), 16-29 (leading byte offset), 32-45 (stride byte offset), each >> 4:
    the fields the wgmma and tcgen05 shared-memory descriptors share."""
    return (matrix_descriptor_encode(desc.start_address)
            | matrix_descriptor_encode(desc.leading_byte_offset) << 16
            | matrix_descriptor_encode(desc.stride_byte_offset) << 32)


@dataclass(frozen=True)
class WgmmaSmemDescriptor:
    """The 64-bit ``wgmma.mma_async`` matrix descriptor (sm_90a).

    PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format" (warpgroup MMA, shared
    memory layout).  All byte quantities go through
    ``matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4``::

        bits   width  field
        0-13   14     matrix start address         encode(start_address)
        14-15   2     (unused, 0)
        16-29  14     leading-dimension byte offset encode(leading_byte_offset)
        30-31   2     (unused, 0)
        32-45  14     stride-dimension byte offset  encode(stride_byte_offset)
        46-48   3     (unused, 0)
        49-51   3     matrix base offset (all modes except no-swizzle)
        52-61  10     (unused, 0)
        62-63   2     swizzle: 0 none (interleave), 1 128B, 2 64B, 3 32B

    ``start_address`` is the byte address in the shared window (what
    ``llvm.ptrtoint`` of an ``!llvm.ptr<3>`` gives).  For K-major swizzled
    operands the leading byte offset is not used by the hardware ("assumed 1");
    the stride byte offset is the distance between 8-row groups.
    """

    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    base_offset: int = 0
    swizzle: str = "128B"

    def check(self) -> Optional[str]:
        if self.swizzle not in WGMMA_SWIZZLE_CODES:
            return f"wgmma swizzle must be one of {tuple(WGMMA_SWIZZLE_CODES)}, got {self.swizzle!r}"
        return _first(*_address_reasons(self), _small_reason("base_offset", self.base_offset, 3))

    def encode(self) -> int:
        reason = self.check()
        if reason:
            raise DescriptorError(reason)
        return (_address_fields(self)
                | (self.base_offset & 0x7) << 49
                | WGMMA_SWIZZLE_CODES[self.swizzle] << 62)

    @classmethod
    def decode(cls, value: int) -> "WgmmaSmemDescriptor":
        """Fields of a 64-bit descriptor, byte quantities scaled back (x16)."""
        value = int(value)
        code = (value >> 62) & 0x3
        return cls(
            start_address=(value & _FIELD14) << 4,
            leading_byte_offset=((value >> 16) & _FIELD14) << 4,
            stride_byte_offset=((value >> 32) & _FIELD14) << 4,
            base_offset=(value >> 49) & 0x7,
            swizzle={v: k for k, v in WGMMA_SWIZZLE_CODES.items()}[code],
        )


# --------------------------------------------------------------------------------------
# Blackwell tcgen05 shared-memory descriptor (sm_100a)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tcgen05SmemDescriptor:
    """The 64-bit ``tcgen05.mma`` shared-memory descriptor (sm_100a).

    PTX ISA 9.7.16.4.1 "Shared Memory Descriptor", Table "Shared memory
    descriptor layout"::

        bits   width  field
        0-13   14     matrix start address                  encode(start_address)
        14-15   2     reserved (0)
        16-29  14     leading-dimension byte offset (lbo_mode 0)
                      or leading-dimension byte address (lbo_mode 1)
                                                            encode(leading_byte_offset)
        30-31   2     reserved (0)
        32-45  14     stride-dimension byte offset          encode(stride_byte_offset)
        46-48   3     fixed constant 0b001 (bit 46 set)
        49-51   3     matrix base offset
        52      1     leading-dimension stride mode: 0 relative offset, 1 absolute address
        53-60   8     fixed constant 0
        61-63   3     swizzle: 0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B
                      (3, 5, 7 invalid)

    with ``encode(x) = (x & 0x3FFFF) >> 4``.  The absolute-address LBO mode is
    for K tiles of 48 bytes and is only supported on sm_103a (ISA target note).
    The constant bit 46 is the one difference from the Hopper format in the low
    bits (CUTLASS calls bits 46-47 ``version_ = 1``; JAX Mosaic GPU ORs ``1 << 46``).
    """

    start_address: int
    leading_byte_offset: int
    stride_byte_offset: int
    base_offset: int = 0
    lbo_mode: int = 0
    swizzle: str = "128B"

    FIXED_BITS = 0b001 << 46

    def check(self) -> Optional[str]:
        if self.swizzle not in TCGEN05_SWIZZLE_CODES:
            return f"tcgen05 swizzle must be one of {tuple(TCGEN05_SWIZZLE_CODES)}, got {self.swizzle!r}"
        return _first(*_address_reasons(self), _small_reason("base_offset", self.base_offset, 3),
                      _small_reason("lbo_mode", self.lbo_mode, 1))

    def encode(self) -> int:
        reason = self.check()
        if reason:
            raise DescriptorError(reason)
        return (_address_fields(self)
                | self.FIXED_BITS
                | (self.base_offset & 0x7) << 49
                | (int(self.lbo_mode) & 0x1) << 52
                | TCGEN05_SWIZZLE_CODES[self.swizzle] << 61)

    @classmethod
    def decode(cls, value: int) -> "Tcgen05SmemDescriptor":
        """Fields of a 64-bit descriptor; raises DescriptorError on a bad constant/swizzle."""
        value = int(value)
        if (value >> 46) & 0x7 != 0b001:
            raise DescriptorError(f"bits 46-48 must be 0b001, got {bin((value >> 46) & 0x7)}")
        code = (value >> 61) & 0x7
        names = {v: k for k, v in TCGEN05_SWIZZLE_CODES.items()}
        if code not in names:
            raise DescriptorError(f"swizzle code {code} is invalid (3, 5 and 7 are reserved)")
        return cls(
            start_address=(value & _FIELD14) << 4,
            leading_byte_offset=((value >> 16) & _FIELD14) << 4,
            stride_byte_offset=((value >> 32) & _FIELD14) << 4,
            base_offset=(value >> 49) & 0x7,
            lbo_mode=(value >> 52) & 0x1,
            swizzle=names[code],
        )


# --------------------------------------------------------------------------------------
# tcgen05 instruction descriptor
# --------------------------------------------------------------------------------------

#: Type codes of the instruction descriptor per ``.kind`` (PTX ISA 9.7.16.4.2):
#: "d" -> bits 4-5 (dtype), "ab" -> bits 7-9 (atype) and 10-12 (btype).
#: f8f6f4 also allows an f16 accumulator (dtype code 0) as kind::f16 does; the
#: descriptor table lists only F32 = 1 for it, Table 39 (shapes) has .f16 and
#: .f32 rows: check the ISA of your PTX version before relying on f16 there.
TCGEN05_IDESC_TYPES = {
    "f16": {"d": {"f16": 0, "f32": 1}, "ab": {"f16": 0, "bf16": 1}},
    "tf32": {"d": {"f32": 1}, "ab": {"tf32": 2}},
    "f8f6f4": {"d": {"f16": 0, "f32": 1}, "ab": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5}},
    "i8": {"d": {"s32": 2}, "ab": {"u8": 0, "s8": 1}},
}

_MAJOR_CODES = {"K": 0, "MN": 1}  # "Transpose A/B Matrix" bits: 0 K-major, 1 MN-major


@dataclass(frozen=True)
class Tcgen05InstrDescriptor:
    """The 32-bit ``tcgen05.mma`` instruction descriptor (``idesc`` operand).

    PTX ISA 9.7.16.4.2 "Instruction Descriptor", Table "Instruction descriptor
    format for .kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8"::

        bits   width  field                       values
        0-1     2     sparsity selector            0-3 (sparse only)
        2       1     sparsity                     0 dense, 1 sparse
        3       1     saturate                     kind::i8 only
        4-5     2     dtype (matrix D)             F16 0, F32 1, S32 2
        6       1     reserved                     0
        7-9     3     atype (matrix A)             f16: F16 0, BF16 1 | tf32: TF32 2 |
                                                   f8f6f4: E4M3 0, E5M2 1, E2M3 3, E3M2 4, E2M1 5 |
                                                   i8: U8 0, S8 1
        10-12   3     btype (matrix B)             as atype
        13      1     negate A                     0/1 (not kind::i8)
        14      1     negate B                     0/1 (not kind::i8)
        15      1     transpose A                  0 K-major, 1 M-major
        16      1     transpose B                  0 K-major, 1 N-major
        17-22   6     N >> 3
        23      1     reserved                     0
        24-28   5     M >> 4
        29      1     reserved                     0
        30-31   2     max shift (.ws B reuse)      0 none, 1 8, 2 16, 3 32

    ``m`` is the full MMA M (128/256 for cta_group::2: CUTLASS ``m_dim_`` "4 (M=64),
    8 (M=128), 16 (M=256)").  ``check()`` validates fields and type
    combinations; shape legality for a CTA group is :meth:`shape_error`.
    Note CUTLASS passes this value in the *upper* half of a 64-bit ``idescE``
    and hands ``idescE >> 32`` to the instruction: the PTX operand is these 32 bits.
    """

    m: int
    n: int
    kind: str = "f16"
    d_type: str = "f32"
    a_type: str = "f16"
    b_type: str = "f16"
    a_major: str = "K"
    b_major: str = "K"
    negate_a: bool = False
    negate_b: bool = False
    sparse: bool = False
    sparse_selector: int = 0
    saturate: bool = False
    max_shift: int = 0

    def check(self) -> Optional[str]:
        types = TCGEN05_IDESC_TYPES.get(self.kind)
        if types is None:
            return f"kind must be one of {tuple(TCGEN05_IDESC_TYPES)}, got {self.kind!r}"
        if self.d_type not in types["d"]:
            return f"kind::{self.kind} takes dtype in {tuple(types['d'])}, got {self.d_type!r}"
        for name, t in (("atype", self.a_type), ("btype", self.b_type)):
            if t not in types["ab"]:
                return f"kind::{self.kind} takes {name} in {tuple(types['ab'])}, got {t!r}"
        if self.kind == "f16" and self.d_type == "f16" and "bf16" in (self.a_type, self.b_type):
            return "kind::f16 with an f16 accumulator takes f16 inputs only (bf16 needs dtype f32)"
        if self.kind == "f16" and self.a_type != self.b_type:
            return f"kind::f16 takes atype == btype, got {self.a_type} and {self.b_type}"
        for name, major in (("a_major", self.a_major), ("b_major", self.b_major)):
            if major not in _MAJOR_CODES:
                return f"{name} must be 'K' or 'MN', got {major!r}"
        if self.kind == "f8f6f4":
            for name, t, major in (("A", self.a_type, self.a_major), ("B", self.b_type, self.b_major)):
                if major == "MN" and t not in ("e4m3", "e5m2"):
                    return f"{name} of type {t} must be K-major (MN-major only for e4m3/e5m2)"
        if self.kind == "i8" and (self.negate_a or self.negate_b):
            return "kind::i8 has no negate"
        if self.saturate and self.kind != "i8":
            return "saturate is for kind::i8 only"
        if not isinstance(self.m, int) or self.m <= 0 or self.m % 16 or (self.m >> 4) > 31:
            return f"M must be a positive multiple of 16 with M >> 4 < 32, got {self.m}"
        if not isinstance(self.n, int) or self.n <= 0 or self.n % 8 or (self.n >> 3) > 63:
            return f"N must be a positive multiple of 8 with N >> 3 < 64, got {self.n}"
        return _first(
            _small_reason("sparse_selector", self.sparse_selector, 2),
            _small_reason("max_shift", self.max_shift, 2),
            None if (self.sparse or self.sparse_selector == 0) else "sparse_selector needs sparse=True",
        )

    def encode(self) -> int:
        reason = self.check()
        if reason:
            raise DescriptorError(reason)
        types = TCGEN05_IDESC_TYPES[self.kind]
        return (
            (self.sparse_selector & 0x3)
            | int(bool(self.sparse)) << 2
            | int(bool(self.saturate)) << 3
            | types["d"][self.d_type] << 4
            | types["ab"][self.a_type] << 7
            | types["ab"][self.b_type] << 10
            | int(bool(self.negate_a)) << 13
            | int(bool(self.negate_b)) << 14
            | _MAJOR_CODES[self.a_major] << 15
            | _MAJOR_CODES[self.b_major] << 16
            | (self.n >> 3) << 17
            | (self.m >> 4) << 24
            | (self.max_shift & 0x3) << 30
        )

    def shape_error(self, cta_group: int = 1, *, a_in_tmem: bool = False) -> Optional[str]:
        """``Tcgen05Mma.shape_error`` for this descriptor's M, N and kind."""
        return Tcgen05Mma.shape_error(self.m, self.n, cta_group=cta_group, kind=self.kind, a_in_tmem=a_in_tmem)

    @classmethod
    def decode(cls, value: int, kind: str = "f16") -> "Tcgen05InstrDescriptor":
        """Fields of a 32-bit descriptor (the kind is not encoded: pass it)."""
        value = int(value)
        types = TCGEN05_IDESC_TYPES[kind]
        d_names = {v: k for k, v in types["d"].items()}
        ab_names = {v: k for k, v in types["ab"].items()}
        majors = {v: k for k, v in _MAJOR_CODES.items()}
        try:
            return cls(
                m=((value >> 24) & 0x1F) << 4,
                n=((value >> 17) & 0x3F) << 3,
                kind=kind,
                d_type=d_names[(value >> 4) & 0x3],
                a_type=ab_names[(value >> 7) & 0x7],
                b_type=ab_names[(value >> 10) & 0x7],
                a_major=majors[(value >> 15) & 0x1],
                b_major=majors[(value >> 16) & 0x1],
                negate_a=bool((value >> 13) & 1),
                negate_b=bool((value >> 14) & 1),
                sparse=bool((value >> 2) & 1),
                sparse_selector=value & 0x3,
                saturate=bool((value >> 3) & 1),
                max_shift=(value >> 30) & 0x3,
            )
        except KeyError as e:
            raise DescriptorError(f"type code {e.args[0]} is not valid for kind::{kind}") from None


# --------------------------------------------------------------------------------------
# K-major tiles
# --------------------------------------------------------------------------------------

_SWIZZLE_WIDTH = {"128B": 128, "64B": 64, "32B": 32}
_CORE_ROWS, _CORE_ROW_BYTES = 8, 16


@dataclass(frozen=True)
class KMajorTile:
    """A K-major ``(rows, k)`` operand tile at byte ``address`` of shared memory.

    The layout is the one of :mod:`tilemlir.layout.mma` (the one TMA writes with a
    box ``rows x W`` per K-chunk):

    * swizzled (W = 128 / 64 / 32 bytes): K-chunks ``W`` bytes wide; inside a
      chunk row r starts at ``r * W``; chunk c starts at ``c * rows * W``.
      Defaults: ``SBO = 8 * W`` (8-row groups); ``LBO = rows * W`` (the chunk
      stride: the hardware ignores LBO for K-major swizzled operands, "assumed 1",
      and upstream MLIR's ``nvgpu.warpgroup.generate.descriptor`` fills it the same
      way).  Pass ``lbo=16`` to get CUTLASS's encoded value 1.
    * "none" (interleaved): 8 x 16-byte core matrices of 128 contiguous bytes;
      defaults ``LBO = 128`` (core matrices along K), ``SBO = 8 * k * elem_bytes``.

    ``address`` must sit on the swizzle repeat (1024 / 512 / 256 bytes) so that
    the matrix base offset is 0; ``check()`` says so otherwise.
    """

    elem_bits: int
    swizzle: str
    rows: int
    k: int
    address: int
    lbo: Optional[int] = None
    sbo: Optional[int] = None

    @property
    def elem_bytes(self) -> float:
        return self.elem_bits / 8

    @property
    def chunk_elems(self) -> int:
        """Elements of K per swizzle chunk (swizzled) or per core-matrix row ("none")."""
        width = _SWIZZLE_WIDTH.get(self.swizzle, _CORE_ROW_BYTES)
        return width * 8 // self.elem_bits

    @property
    def chunk_stride(self) -> int:
        """Bytes between consecutive K-chunks (swizzled) / core matrices along K ("none")."""
        if self.swizzle == "none":
            return _CORE_ROWS * _CORE_ROW_BYTES
        return self.rows * _SWIZZLE_WIDTH[self.swizzle]

    def strides(self) -> tuple[int, int]:
        """``(lbo, sbo)`` in bytes: the given ones, or the layout's defaults."""
        if self.swizzle == "none":
            lbo = _CORE_ROWS * _CORE_ROW_BYTES
            sbo = _CORE_ROWS * self.k * self.elem_bits // 8
        else:
            lbo = self.rows * _SWIZZLE_WIDTH[self.swizzle]
            sbo = _CORE_ROWS * _SWIZZLE_WIDTH[self.swizzle]
        return (lbo if self.lbo is None else self.lbo, sbo if self.sbo is None else self.sbo)

    def check(self) -> Optional[str]:
        if self.elem_bits not in (4, 6, 8, 16, 32):
            return f"elem_bits must be one of (4, 6, 8, 16, 32), got {self.elem_bits!r}"
        if self.elem_bits == 6:
            return "6-bit elements are stored padded to 8 bits: describe them with elem_bits=8"
        if self.swizzle not in ("none", *_SWIZZLE_WIDTH):
            return f"swizzle must be one of ('128B', '64B', '32B', 'none'), got {self.swizzle!r}"
        if not isinstance(self.rows, int) or self.rows <= 0 or self.rows % _CORE_ROWS:
            return f"rows must be a positive multiple of 8, got {self.rows!r}"
        if not isinstance(self.k, int) or self.k <= 0 or self.k % self.chunk_elems:
            return (
                f"K must be a positive multiple of {self.chunk_elems} "
                f"({self.swizzle} chunk of {self.elem_bits}-bit elements), got {self.k!r}"
            )
        reason = _addr_reason("address", self.address)
        if reason:
            return reason
        rep = SWIZZLE_REPEAT_BYTES.get(self.swizzle)
        if rep and self.address % rep:
            return (
                f"a {self.swizzle}-swizzled tile must start on a {rep}-byte boundary "
                f"(else the matrix base offset is non-zero), got address {self.address}"
            )
        lbo, sbo = self.strides()
        end = self.address + (self.k // self.chunk_elems) * self.chunk_stride
        return _first(
            _addr_reason("lbo", lbo),
            _addr_reason("sbo", sbo),
            None if end <= _ADDR_WINDOW else f"tile ends at byte {end}, past the 256 KiB descriptor window",
        )

    def k_offset_bytes(self, k0: int) -> int:
        """Start-address offset of the sub-tile starting at K element ``k0``.

        ``k0`` must be a multiple of the MMA-K step (32 bytes of K).  Inside a
        swizzle chunk this is ``k0 * elem_bytes`` (32 bytes per MMA-K step);
        crossing a chunk adds the chunk stride.  Why a plain 32-byte advance is
        right although the data is swizzled: the hardware applies the swizzle to
        the *address* it generates, XOR-ing the 16-byte-chunk bits [4, 4+b) with
        the address bits [7, 7+b) (b = 3 / 2 / 1 for 128B / 64B / 32B; the
        pattern is anchored at the 1024 / 512 / 256-byte repeat, hence base
        offset 0).  TMA (or the swizzled stores) placed logical chunk c of row r
        at exactly that XOR of the same absolute address.  A step of 32 bytes
        stays inside the W-byte row (W >= 32 and the steps are 32-aligned), so it
        changes only chunk bits below log2(W) and leaves the XOR source bits
        [7, 7+b) of every row alone: the hardware XORs the same value into chunk
        c + 2 that the store XORed into logical chunk c + 2 of that row, and the
        MMA reads K elements k0 .. k0 + K - 1 (test_k_step_under_swizzle_model
        checks this on a model of the three swizzles).
        CUTLASS (``GMMA::DescriptorIterator``) and DeepGEMM
        advance descriptors the same way, by adding to the low word.
        """
        bytes_k = k0 * self.elem_bits // 8
        if k0 < 0 or (k0 * self.elem_bits) % 8 or bytes_k % MMA_K_STEP_BYTES:
            raise DescriptorError(f"k0 = {k0} is not on a {MMA_K_STEP_BYTES}-byte MMA-K step")
        if k0 >= self.k:
            raise DescriptorError(f"k0 = {k0} is outside the tile's K = {self.k}")
        if self.swizzle == "none":
            # two core matrices (16 bytes of K each) per 32-byte step, LBO apart
            return (bytes_k // _CORE_ROW_BYTES) * self.strides()[0]
        width = _SWIZZLE_WIDTH[self.swizzle]
        return (bytes_k // width) * self.chunk_stride + bytes_k % width

    def _fields(self, k0: int) -> tuple[int, int, int]:
        reason = self.check()
        if reason:
            raise DescriptorError(reason)
        lbo, sbo = self.strides()
        return self.address + self.k_offset_bytes(k0), lbo, sbo

    def wgmma_descriptor(self, k0: int = 0) -> int:
        start, lbo, sbo = self._fields(k0)
        return WgmmaSmemDescriptor(start, lbo, sbo, 0, self.swizzle).encode()

    def tcgen05_descriptor(self, k0: int = 0) -> int:
        start, lbo, sbo = self._fields(k0)
        return Tcgen05SmemDescriptor(start, lbo, sbo, 0, 0, self.swizzle).encode()


@dataclass(frozen=True)
class MNMajorTile:
    """An MN-major ``(k, mn)`` operand tile (MN contiguous) at byte ``address`` of shared memory.

    The layout is ``mma_shared_layout(elem_bits, swizzle, (k, mn))`` of :mod:`tilemlir.layout`
    read with K as its rows (the one TMA writes with a box ``k x W`` per MN-chunk), possibly with
    other strides between its 8-row groups and between its chunks (a row window of a taller
    buffer):

    * swizzled (W = 128 / 64 / 32 bytes): MN-chunks ``W`` bytes wide ("swizzle atoms"); inside
      a chunk K row r starts at ``r * W``.  The PTX ISA canonical MN-major layout is, in
      16-byte units, ``((W/16, n), (8, k)) : ((1, LBO), (W/16, SBO))``, so LBO = ``mn_stride``
      (bytes between the atoms along MN) and SBO = ``k_group_stride`` (bytes between 8-row
      groups along K, ``8 * W`` for rows one after another).
    * "none" (interleaved): 8 x 16-byte core matrices (8 K rows of 8 16-bit MN elements):
      ``((1, n), (8, k)) : ((X, SBO), (1, LBO))``, so the roles swap: SBO = ``mn_stride``
      (bytes between core matrices along MN), LBO = ``k_group_stride`` (between 8-row groups).

    CUTLASS's ``make_gmma_desc<Major::MN>`` reads the same fields off its canonical layouts.
    A K step (16 rows of 16-bit elements) moves the start address by two 8-row groups; the
    tile and every chunk start on the swizzle repeat, so the base offset is 0.
    """

    elem_bits: int
    swizzle: str
    k: int
    mn: int
    address: int
    k_group_stride: int
    mn_stride: int

    @property
    def chunk_elems(self) -> int:
        """MN elements per swizzle atom (swizzled) or per core-matrix row ("none")."""
        width = _SWIZZLE_WIDTH.get(self.swizzle, _CORE_ROW_BYTES)
        return width * 8 // self.elem_bits

    def strides(self) -> tuple[int, int]:
        """``(lbo, sbo)`` in bytes, as the descriptor holds them."""
        if self.swizzle == "none":
            return self.k_group_stride, self.mn_stride
        return self.mn_stride, self.k_group_stride

    def check(self) -> Optional[str]:
        if self.elem_bits != 16:
            return f"MN-major tiles are described for 16-bit elements, got {self.elem_bits!r}"
        if self.swizzle not in ("none", *_SWIZZLE_WIDTH):
            return f"swizzle must be one of ('128B', '64B', '32B', 'none'), got {self.swizzle!r}"
        if not isinstance(self.k, int) or self.k <= 0 or self.k % 16:
            return f"K must be a positive multiple of 16 (one MMA-K step), got {self.k!r}"
        if not isinstance(self.mn, int) or self.mn <= 0 or self.mn % self.chunk_elems:
            return (f"MN must be a positive multiple of {self.chunk_elems} ({self.swizzle} "
                    f"chunk of {self.elem_bits}-bit elements), got {self.mn!r}")
        rep = SWIZZLE_REPEAT_BYTES.get(self.swizzle)
        if rep:
            for name, value in (("address", self.address), ("k_group_stride", self.k_group_stride),
                                ("mn_stride", self.mn_stride)):
                if _as_int(value) is None or value % rep:
                    return (f"{name} of a {self.swizzle}-swizzled MN-major tile must be a "
                            f"multiple of its {rep}-byte repeat (else the base offset is "
                            f"non-zero), got {value}")
        lbo, sbo = self.strides()
        return _first(_addr_reason("address", self.address), _addr_reason("lbo", lbo),
                      _addr_reason("sbo", sbo))

    def k_offset_bytes(self, k0: int) -> int:
        """Start-address offset of the sub-tile starting at K row ``k0`` (a multiple of 16)."""
        if k0 < 0 or k0 % 16:
            raise DescriptorError(f"k0 = {k0} is not on a 16-row MMA-K step")
        if k0 >= self.k:
            raise DescriptorError(f"k0 = {k0} is outside the tile's K = {self.k}")
        return (k0 // _CORE_ROWS) * self.k_group_stride

    def wgmma_descriptor(self, k0: int = 0) -> int:
        reason = self.check()
        if reason:
            raise DescriptorError(reason)
        lbo, sbo = self.strides()
        return WgmmaSmemDescriptor(self.address + self.k_offset_bytes(k0), lbo, sbo, 0,
                                   self.swizzle).encode()


def kmajor_smem_descriptor(
    target: str,
    elem_bits: int,
    swizzle: str,
    tile: tuple[int, int],
    address: int,
    lbo: Optional[int] = None,
    sbo: Optional[int] = None,
    k0: int = 0,
) -> int:
    """The shared-memory descriptor of a K-major ``tile = (rows, K)`` at ``address``.

    ``target`` is "wgmma" (sm_90a) or "tcgen05" (sm_100a); ``lbo`` / ``sbo`` in
    bytes (``None``: the :class:`KMajorTile` defaults); ``k0``: first K element
    (a multiple of the 32-byte MMA-K step).  Raises DescriptorError with a reason.

    >>> hex(kmajor_smem_descriptor("wgmma", 16, "128B", (128, 64), 1024, lbo=16, sbo=1024))
    '0x4000004000010040'
    >>> hex(kmajor_smem_descriptor("tcgen05", 16, "128B", (128, 64), 1024, lbo=16, sbo=1024))
    '0x4000404000010040'
    """
    t = KMajorTile(elem_bits, swizzle, tile[0], tile[1], address, lbo, sbo)
    if target == "wgmma":
        return t.wgmma_descriptor(k0)
    if target == "tcgen05":
        return t.tcgen05_descriptor(k0)
    raise DescriptorError(f"target must be 'wgmma' or 'tcgen05', got {target!r}")


def descriptor_start_address(desc: int) -> int:
    """The start address (bytes) held in bits 0-13 of either descriptor format."""
    return (int(desc) & _FIELD14) << 4


def advance_descriptor(desc: int, byte_offset: int) -> int:
    """``desc`` with its start address moved by ``byte_offset`` bytes (both formats).

    This is the K-step rule: one MMA-K step of a K-major swizzled operand inside
    its swizzle chunk is ``+32`` bytes, i.e. ``+2`` in the 14-bit start field (see
    :meth:`KMajorTile.k_offset_bytes` for why that is valid under swizzling).
    The other fields are untouched; a carry out of the 14-bit field is refused
    rather than corrupting bits 14-15.
    """
    if byte_offset % 16:
        raise DescriptorError(f"byte_offset must be a multiple of 16, got {byte_offset}")
    field = (int(desc) & _FIELD14) + byte_offset // 16
    if not 0 <= field <= _FIELD14:
        raise DescriptorError(
            f"start address {descriptor_start_address(desc)} + {byte_offset} leaves the 14-bit field"
        )
    return (int(desc) & ~_FIELD14) | field

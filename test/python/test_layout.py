"""Unit tests of tilemlir.layout: PTX fragments, tiling, text, slicing, swizzles, errors."""

import doctest
import importlib
import re

import numpy as np
import pytest

import tilemlir.layout as layout_pkg
from tilemlir.layout import (Iter, LayoutError, R, S, Swizzle, TileLayout, from_attr_text, laneid,
                             mma_shared_layout, mma_shared_strides, parse_layout, row_major_layout,
                             swizzle_for, tid_in_wg, to_attr_text, tx, warpid, wid_in_wg)
from tilemlir.layout import text as layout_text

# mma.sync m16n8k16 fragments (f16 inputs, f32 accumulators)
D_FRAG = TileLayout(S[(2, 8, 4, 2) : (2, 4 @ laneid, 1 @ laneid, 1)])  # 16 x 8 (M x N)
A_FRAG_K8 = D_FRAG  # 16 x 8 (M x K)
B_FRAG_K8 = TileLayout(S[(4, 2, 8) : (1 @ laneid, 1, 4 @ laneid)])  # 8 x 8 (K x N)
A_FRAG = A_FRAG_K8.tile_to([16, 16], [16, 8])
B_FRAG = B_FRAG_K8.tile_to([16, 8], [8, 8])


# PTX ISA "Matrix Fragments for mma.m16n8k16": (lane, register i) -> (row, col)
def ptx_c(lane, i):
    group, tig = divmod(lane, 4)
    return group + 8 * (i >= 2), 2 * tig + i % 2


def ptx_a(lane, i):
    group, tig = divmod(lane, 4)
    return group + 8 * (i % 4 >= 2), 2 * tig + i % 2 + 8 * (i >= 4)


def ptx_b(lane, i):
    group, tig = divmod(lane, 4)
    return 2 * tig + i % 2 + 8 * (i >= 2), group


@pytest.mark.parametrize("frag, shape, regs, ptx", [
    (D_FRAG, (16, 8), 4, ptx_c),
    (A_FRAG, (16, 16), 8, ptx_a),
    (B_FRAG, (16, 8), 4, ptx_b),
])
def test_fragment_matches_ptx_register_mapping(frag, shape, regs, ptx):
    assert frag.size() == 32 * regs
    for lane in range(32):
        for i in range(regs):
            assert frag.evaluate_coord(ptx(lane, i), shape) == {"m": i, "laneid": lane}
    assert frag.is_injective()
    assert frag.span("m") == regs and frag.span("laneid") == 32


def test_tile_to_a_fragment_slots():
    for m in range(16):
        for k in range(16):
            k_hi, t, kp = k // 8, k % 8 // 2, k % 2
            r_m, g = divmod(m, 8)
            expected = {"m": 4 * k_hi + 2 * r_m + kp, "laneid": 4 * g + t}
            assert A_FRAG.evaluate_coord((m, k), (16, 16)) == expected


def test_tile_to_b_fragment_slots():
    for k in range(16):
        for n in range(8):
            k_hi, t, kp = k // 8, k % 8 // 2, k % 2
            assert B_FRAG.evaluate_coord((k, n), (16, 8)) == {"m": 2 * k_hi + kp, "laneid": 4 * n + t}
    assert str(B_FRAG) == "S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]"


def test_tile_to_register_layout_without_memory_axis():
    one_per_thread = TileLayout(S[128 : 1 @ tid_in_wg])
    tiled = one_per_thread.tile_to((2, 128), (1, 128))
    assert tiled.evaluate_coord((1, 5), (2, 128)) == {"m": 1, "tid_in_wg": 5}


def test_tile_to_swizzled_atom_keeps_the_swizzle_per_copy():
    atom = mma_shared_layout(16, "128B", (8, 64))
    tiled = atom.tile_to((16, 128), (8, 64)).evaluate_all((16, 128))["m"]
    atom_m = atom.evaluate_all((8, 64))["m"]
    for tile_row in range(2):
        for tile_col in range(2):
            block = tiled[8 * tile_row:8 * tile_row + 8, 64 * tile_col:64 * tile_col + 64]
            assert np.array_equal(block, atom_m + 512 * (2 * tile_row + tile_col))


def test_text_of_a_full_layout():
    full = TileLayout(S[(2, 4, 2) : (2, 1 @ laneid, 1)], R[(4,) : (1 @ warpid,)],
                      offset={"laneid": 12, "m": 0}, swizzle=Swizzle(3, 3, 3))
    text = "S[(2, 4, 2):(2, 1@laneid, 1)] R[(4):(1@warpid)] + {laneid: 12} o Sw<3,3,3>"
    assert str(full) == text
    assert parse_layout(text) == full
    assert eval(repr(full), vars(layout_pkg)) == full


@pytest.mark.parametrize("text, canonical", [
    ("S[8:1]", "S[(8):(1)]"),
    ("  S [ ( 2 , 4 , ) : ( 4@m , 1 ) ]  ", "S[(2, 4):(4, 1)]"),
    ("S[():()] + {TCol: 3}", "S[():()] + {TCol: 3}"),
    ("S[32:1@TLane] + {m: 4, cta_x: 1}", "S[(32):(1@TLane)] + {m: 4, cta_x: 1}"),
    ("S[64:1]o Sw<2,3,3>", "S[(64):(1)] o Sw<2,3,3>"),
])
def test_parse_accepts_free_spacing_and_shorthands(text, canonical):
    assert str(parse_layout(text)) == canonical


@pytest.mark.parametrize("text, column, words", [
    ("S[(2, 8):(1, 2@lane)]", 16, "axis name"),
    ("S[(2, 8):(1)]", 10, "2 strides"),
    ("S[(2, 0):(1, 1)]", 7, "extent >= 1"),
    ("S[8:1] Q", 8, "the end"),
    ("S[8:1] + {m: 1, m: 2}", 17, "repeats"),
    ("S[8:1] o Sw<1,3,0>", 10, "valid swizzle"),
    ("S[8:-1]", 5, "an integer"),
    ("R[8:1]", 1, "'S'"),
    ("S[(8, 2:(1, 1)]", 8, "',' or ')'"),
    ("S[8:1] R[2:1@TLane]", 1, "holder axis"),
])
def test_parse_errors_give_the_column(text, column, words):
    with pytest.raises(LayoutError, match=re.escape(words)) as caught:
        parse_layout(text)
    assert caught.value.column == column


def test_attr_text_round_trip_and_escapes():
    attr = to_attr_text(B_FRAG)
    assert attr == '#tile.layout<"S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]">'
    assert from_attr_text(attr) == B_FRAG
    assert from_attr_text('  #tile.layout<"S[8:\\31]">') == TileLayout(S[8:1])
    tricky = 'a "quoted" \\ back\nslash é'
    escaped = layout_text._escape(tricky)
    assert '"' not in escaped and "\n" not in escaped
    assert layout_text._unescape(escaped + '"', 0) == (tricky, len(escaped) + 1)


@pytest.mark.parametrize("attr, words", [
    ('#tile.lay<"S[8:1]">', "starting with"),
    ('#tile.layout<"S[8:1]"', "after the string"),
    ('#tile.layout<"S[8:1]', "unterminated"),
    ('#tile.layout<"S[8:\\q1]">', "bad escape"),
])
def test_attr_text_errors(attr, words):
    with pytest.raises(LayoutError, match=words):
        from_attr_text(attr)


def test_slice_a_row_of_the_accumulator():
    for g in range(8):
        row = D_FRAG.slice((16, 8), [(g, g + 1), (0, 8)])
        assert row == TileLayout(S[(4, 2) : (1 @ laneid, 1)], offset={"laneid": 4 * g})
    assert str(D_FRAG.slice((16, 8), [(12, 13), (0, 8)])) == "S[(4, 2):(1@laneid, 1)] + {m: 2, laneid: 16}"


def test_slice_the_second_k_half_of_the_a_fragment_is_the_k8_fragment_moved_by_4_slots():
    upper = A_FRAG.slice((16, 16), [(0, 16), (8, 16)])
    assert upper.equivalent(A_FRAG_K8.replace(offset={"m": 4}))


def test_slice_swizzled_adds_before_the_swizzle():
    smem = mma_shared_layout(16, "128B", (8, 64))
    rows = smem.slice((8, 64), [(2, 4), (16, 32)])
    full = smem.evaluate_all((8, 64))["m"]
    assert np.array_equal(rows.evaluate_all((2, 16))["m"], full[2:4, 16:32])
    assert rows.offset == {"m": 2 * 64 + 16}


def test_slice_refuses_a_range_straddling_an_iterator():
    with pytest.raises(LayoutError, match=re.escape("range [4, 12) of dim 0 straddles iterator 8:4@laneid")):
        D_FRAG.slice((16, 8), [(4, 12), (0, 8)])


def test_permute_transposes_b_fragment():
    b_nk = B_FRAG_K8.permute_by_groups((8, 8), (1, 0))
    assert str(b_nk) == "S[(8, 4, 2):(4@laneid, 1@laneid, 1)]"
    for k in range(8):
        for n in range(8):
            assert b_nk.evaluate_coord((n, k), (8, 8)) == B_FRAG_K8.evaluate_coord((k, n), (8, 8))


def test_group_splits_straddling_iterators():
    groups = TileLayout(S[(2, 12) : (12, 1 @ tid_in_wg)]).group((6, 4))
    assert groups == [[Iter(2, 12), Iter(3, 4, "tid_in_wg")], [Iter(4, 1, "tid_in_wg")]]


def test_canonicalize_equality_and_hash():
    messy = TileLayout(S[(1, 2, 4, 1) : (5, 4, 1, 3)], R[(1, 2, 2) : (1 @ warpid, 1 @ tx, 2 @ tx)],
                       offset={"laneid": 0})
    clean = messy.canonicalize()
    assert clean == TileLayout(S[8:1], R[4 : 1 @ tx])
    assert clean.equivalent(messy) and messy != clean
    assert hash(clean) == hash(parse_layout(str(clean)))
    assert clean.canonicalize() == clean


# byte address -> swizzled byte address, as the hardware defines the modes
HW_SWIZZLE_BITS = {"128B": 3, "64B": 2, "32B": 1, "none": 0}


def hardware_swizzle(byte_address, mode):
    mask = (1 << HW_SWIZZLE_BITS[mode]) - 1
    return byte_address ^ (((byte_address >> 7) & mask) << 4)


def test_swizzle_128b_f16_xors_the_16_byte_chunk_with_the_row():
    m = mma_shared_layout(16, "128B", (8, 64)).evaluate_all((8, 64))["m"]
    for r in range(8):
        for c in range(64):
            assert m[r, c] == r * 64 + ((c // 8) ^ r) * 8 + c % 8


@pytest.mark.parametrize("mode", ["128B", "64B", "32B", "none"])
@pytest.mark.parametrize("elem_bits", [8, 16, 32])
def test_mma_shared_layout_matches_descriptor_strides_and_hardware_swizzle(mode, elem_bits):
    elem_bytes = elem_bits // 8
    rows, k = 16, 2 * (128 // elem_bytes)
    strides = mma_shared_strides(elem_bits, mode, (rows, k))
    chunk = strides["chunk_elems"]
    smem = mma_shared_layout(elem_bits, mode, (rows, k))
    m = smem.evaluate_all((rows, k))["m"]
    row_bytes = chunk * elem_bytes  # W for swizzled modes, 16 for the core-matrix rows
    for r in range(rows):
        for c in range(k):
            linear = ((c // chunk) * strides["lbo_bytes"] + (r // 8) * strides["sbo_bytes"]
                      + (r % 8) * row_bytes + (c % chunk) * elem_bytes)
            assert m[r, c] * elem_bytes == hardware_swizzle(linear, mode)
    assert smem.span() == rows * k and smem.is_injective()


@pytest.mark.parametrize("elem_bits, mode, shape, expected", [
    (16, "128B", (64, 64), dict(lbo_bytes=8192, sbo_bytes=1024, chunk_elems=64)),
    (16, "64B", (64, 64), dict(lbo_bytes=4096, sbo_bytes=512, chunk_elems=32)),
    (16, "32B", (64, 64), dict(lbo_bytes=2048, sbo_bytes=256, chunk_elems=16)),
    (16, "none", (64, 64), dict(lbo_bytes=128, sbo_bytes=1024, chunk_elems=8)),
    (32, "128B", (128, 32), dict(lbo_bytes=16384, sbo_bytes=1024, chunk_elems=32)),
    (32, "64B", (128, 32), dict(lbo_bytes=8192, sbo_bytes=512, chunk_elems=16)),
    (32, "32B", (128, 32), dict(lbo_bytes=4096, sbo_bytes=256, chunk_elems=8)),
    (32, "none", (128, 32), dict(lbo_bytes=128, sbo_bytes=1024, chunk_elems=4)),
])
def test_mma_shared_strides_and_span(elem_bits, mode, shape, expected):
    assert mma_shared_strides(elem_bits, mode, shape) == expected
    smem = mma_shared_layout(elem_bits, mode, shape)
    assert smem.span() == shape[0] * shape[1]
    assert smem.swizzle == swizzle_for(mode, elem_bits)


def test_swizzle_for_modes():
    assert swizzle_for("128B", 16) == Swizzle(3, 3, 3)
    assert swizzle_for("64B", 16) == Swizzle(2, 3, 3)
    assert swizzle_for("32B", 16) == Swizzle(1, 3, 3)
    assert swizzle_for("128B", 32) == Swizzle(3, 2, 3)
    assert swizzle_for("128B", 8) == Swizzle(3, 4, 3)
    assert swizzle_for("none", 16) is None


def test_span_counts_swizzle_and_replicas():
    assert TileLayout(S[8:1], swizzle=Swizzle(3, 3, 3)).span() == 8
    assert TileLayout(S[8:1], offset={"m": 64}, swizzle=Swizzle(3, 3, 3)).span() == 80
    assert TileLayout(S[8:1], R[4 : 8 @ laneid]).span("laneid") == 25
    assert TileLayout(S[8 : 1 @ laneid]).span("m") == 0


def test_row_major_layout_and_evaluate_all():
    buffer = row_major_layout((256, 256), strides=(264, 1))
    m = buffer.evaluate_all((256, 256))["m"]
    assert m.shape == (256, 256) and m[3, 7] == 3 * 264 + 7
    assert buffer.evaluate(3 * 256 + 7) == {"m": 3 * 264 + 7}


def test_injectivity_and_holders():
    assert TileLayout(S[8:1], R[4 : 1 @ warpid]).is_injective()
    assert not TileLayout(S[2 : 1 @ laneid], R[2 : 1 @ laneid]).is_injective()
    assert not TileLayout(S[4:0]).is_injective()
    broadcast = TileLayout(S[8:1], R[(2, 2) : (1 @ warpid, 16 @ laneid)], offset={"laneid": 1})
    copies = [{"m": 3, "laneid": 1 + lane, "warpid": warp} for warp in (0, 1) for lane in (0, 16)]
    assert broadcast.holders(3) == copies


@pytest.mark.parametrize("build, words", [
    (lambda: TileLayout(S[(1, 6, 4) : (1, 4, 1)]).group((4, 6)),
     "extent 6 of iterator 1 does not divide dim 0 (size 4) of shape (4, 6)"),
    (lambda: D_FRAG.group((16, 4)), "has 128 elements but shape (16, 4) has 64"),
    (lambda: D_FRAG.tile_to((16, 12), (16, 8)), "dim 1 of to_shape (16, 12) (12) is not a multiple"),
    (lambda: TileLayout(S[8:1], swizzle=Swizzle(3, 3, 3)).tile_to((16,), (8,)), "period 512"),
    (lambda: D_FRAG.permute_by_groups((16, 8), (0, 0)), "not a permutation"),
    (lambda: D_FRAG.slice((16, 8), [(0, 17), (0, 8)]), "not a non-empty box"),
    (lambda: D_FRAG.evaluate(128), "flat index 128 is out of range"),
    (lambda: D_FRAG.evaluate_coord((16, 0), (16, 8)), "out of shape"),
    (lambda: TileLayout(S[64 : 1 @ laneid]), "laneid reaches 63 but has only 32 values"),
    (lambda: TileLayout(S[8:1], R[2:1]), "not on a holder axis"),
    (lambda: TileLayout(S[8:1], offset={"lane": 1}), "unknown axis 'lane'"),
    (lambda: TileLayout(Iter(8, 1)), "must be a tuple of Iter"),
    (lambda: S[8], "write S[extents : strides]"),
    (lambda: S[(2, 4) : (1,)], "2 extents but 1 strides"),
    (lambda: Iter(0, 1), "iterator extent must be >= 1"),
    (lambda: Iter(2, 1.5), "iterator stride must be an integer"),
    (lambda: Swizzle(3, 3, 2), "shift >= bits"),
    (lambda: swizzle_for("16B", 16), "swizzle mode must be one of"),
    (lambda: mma_shared_layout(16, "128B", (8, 96)), "K a multiple of 64"),
    (lambda: mma_shared_layout(12, "none", (8, 8)), "elem_bits must be one of"),
    (lambda: D_FRAG.replace(shape=(1,)), "no field(s) ['shape']"),
])
def test_error_messages(build, words):
    with pytest.raises(LayoutError, match=re.escape(words)):
        build()


MODULES = ["", ".errors", ".axes", ".swizzle", ".builders", ".tile_layout", ".algebra", ".mma", ".text",
           ".instructions", ".plot"]


@pytest.mark.parametrize("submodule", MODULES)
def test_docstring_examples(submodule):
    module = importlib.import_module("tilemlir.layout" + submodule)
    results = doctest.testmod(module, extraglobs=vars(layout_pkg))  # examples may use the package names
    assert results.failed == 0


def test_row_vector_is_the_column_part_replicated_over_the_rows():
    """A bias for the m16n8 accumulator: columns as the accumulator's, rows' lanes as replicas;
    every holder of accumulator column j holds element j of the vector, in one slot."""
    vec = D_FRAG.row_vector((16, 8))
    assert str(vec) == "S[(4, 2):(1@laneid, 1)] R[(8):(4@laneid)]"
    for flat in range(16 * 8):
        i, j = divmod(flat, 8)
        holder = D_FRAG.evaluate_coord((i, j), (16, 8))["laneid"]
        assert holder in [h["laneid"] for h in vec.holders(j)]
    # wgmma's: the column iterators' slots renumbered densely (32 columns: 8 slots a thread)
    acc = TileLayout(S[(4, 2, 8, 4, 4, 2):(1 @ wid_in_wg, 2, 4 @ laneid, 4, 1 @ laneid, 1)])
    assert str(acc.row_vector((64, 32))) == \
        "S[(4, 4, 2):(2, 1@laneid, 1)] R[(8, 4):(4@laneid, 1@wid_in_wg)]"
    with pytest.raises(LayoutError, match="row_vector takes an unreplicated"):
        vec.row_vector((1, 8))

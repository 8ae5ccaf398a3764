"""T.plot_layout: which thread and register holds each element of a register layout, which bank
each element of a shared layout uses; text always, SVG with matplotlib."""

import numpy as np
import pytest

import tilemlir.lang as T
from tilemlir.layout import LayoutError, MmaSync, layout_text
from tilemlir.layout.plot import picture


def _cells(text: str) -> list[list[str]]:
    """The table of a text picture: its rows of labels, without the row numbers."""
    return [line.split()[1:] for line in text.splitlines()[4:]]


def test_the_wgmma_accumulator_names_the_ptx_fragment():
    """wgmma m64nNk16's D fragment (PTX ISA): thread 4 * (row % 8) + (col % 8) / 2 of warp
    row / 16, registers 4 * (col / 8) + 2 * ((row % 16) / 8) + col % 2."""
    cells = _cells(layout_text(T.wgmma_accumulator_layout(64, 16), (64, 16)))
    for row in range(64):
        for col in range(16):
            thread = 32 * (row // 16) + 4 * (row % 8) + (col % 8) // 2
            slot = 4 * (col // 8) + 2 * ((row % 16) // 8) + col % 2
            assert cells[row][col] == f"T{thread}:{slot}"


def test_an_ldmatrix_fragment_is_the_mma_sync_a_fragment():
    """ldmatrix.x4 of a 16x16 tile gives lane l row l / 4, elements 2 (l % 4), +1 of each 8x8
    matrix, matrix q in registers 2q, 2q + 1: mma.sync m16n8k16's A."""
    cells = _cells(layout_text(MmaSync(16).a_layout(), (16, 16)))
    lane, position = MmaSync(16).a_fragment()
    assert [[f"T{t}:{p}" for t, p in zip(a, b)] for a, b in zip(lane, position)] == cells


def test_a_128b_swizzled_tile_spreads_every_column_over_all_banks():
    """128B swizzle of 16-bit elements: row r keeps its 16-byte chunks XORed with r % 8, so an
    8x8 block of a column (one ldmatrix) lands in 8 different 4-bank groups."""
    layout = T.mma_shared_layout("float16", "128B", (8, 64))
    banks = np.array(_cells(layout_text(layout, (8, 64), 16)), int)
    r, c = np.indices((8, 64))
    assert (banks == (r * 128 + ((c // 8) ^ r) * 16 + (c % 8) * 2) // 4 % 32).all()
    for c0 in range(0, 64, 8):
        assert len(set(banks[:, c0] // 4)) == 8
    plain = np.array(_cells(layout_text(T.TileLayout(T.S[(8, 64):(64, 1)]), (8, 64), 16)), int)
    assert len(set(plain[:, 0])) == 1                  # unswizzled: a column is one bank


def test_replicas_and_tensor_memory_are_said():
    vector = T.wgmma_accumulator_layout(64, 16).row_vector((64, 16))
    assert "each element is also held by 31 replicas" in layout_text(vector, (16,))
    p = picture(T.tcgen05_accumulator_layout(128, 16), (128, 16))
    assert p.kind == "tmem" and p.labels[5, 3] == "L5:3"


def test_plot_layout_writes_text_or_svg(tmp_path):
    layout = T.mma_shared_layout("float16", "128B", (8, 64))
    text = T.plot_layout(layout, (8, 64), "float16", path=tmp_path / "a.txt", format="text")
    assert (tmp_path / "a.txt").read_text() == text and text.startswith("shared memory, 16-bit")
    pytest.importorskip("matplotlib")
    svg = T.plot_layout(T.wgmma_accumulator_layout(64, 16), (64, 16), path=tmp_path / "a.svg")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert (tmp_path / "a.svg").read_text() == svg


@pytest.mark.parametrize("call, words", [
    (lambda: T.plot_layout(T.wgmma_accumulator_layout(64, 16), (64, 8)), "has 1024 elements"),
    (lambda: T.plot_layout(T.TileLayout(T.S[8:1]), (8,), format="png"), "format must be"),
    (lambda: T.plot_layout("S[8:1]", (8,)), "layout must be a TileLayout"),
    (lambda: T.plot_layout(T.TileLayout(T.S[8:1]), (8,), kind="global"), "kind must be"),
])
def test_wrong_arguments_say_which(call, words):
    with pytest.raises(LayoutError, match=words):
        call()

"""The tensor-core instruction families (tilemlir/layout/instructions.py): each family's layouts
say what its fragment arrays say, and a shape it does not have is refused when the object is
made."""

import re

import numpy as np
import pytest

from tilemlir.layout import LayoutError
from tilemlir.layout.instructions import (MMA_SYNC, MmaSync, Tcgen05Mma, Wgmma, wgmma_a_layout,
                                          wgmma_accumulator_layout)


@pytest.mark.parametrize("inst", MMA_SYNC, ids=lambda i: f"{i.name}.{i.input_type}")
def test_mma_sync_layouts_are_its_fragments(inst):
    for layout, fragment, shape in ((inst.a_layout(), inst.a_fragment(), (inst.m, inst.k)),
                                    (inst.b_layout(), inst.b_fragment(), (inst.k, inst.n)),
                                    (inst.c_layout(), inst.c_fragment(), (inst.m, inst.n))):
        held = layout.evaluate_all(shape)
        lane, position = fragment
        assert np.array_equal(held["laneid"], lane) and np.array_equal(held["m"], position)


@pytest.mark.parametrize("m, n", [(64, 8), (64, 256), (128, 64), (192, 24)])
def test_wgmma_accumulator_layout_is_its_fragment(m, n):
    wgmma = Wgmma(n)
    held = wgmma.accumulator_layout(m).evaluate_all((m, n))
    lane, warp, block, register = wgmma.accumulator_fragment(m)
    assert np.array_equal(held["laneid"], lane) and np.array_equal(held["wid_in_wg"], warp)
    assert np.array_equal(held["m"], block * (n // 2) + register)


@pytest.mark.parametrize("m, k", [(64, 16), (64, 128), (128, 64), (64, 512)])
def test_wgmma_a_layout_is_the_register_a_fragment(m, k):
    held = wgmma_a_layout(m, k).evaluate_all((m, k))
    lane, warp, block, step, position = Wgmma.a_fragment(m, k)
    assert np.array_equal(held["laneid"], lane) and np.array_equal(held["wid_in_wg"], warp)
    assert np.array_equal(held["m"], block * (k // 2) + step * 8 + position)


@pytest.mark.parametrize("m, n", [(64, 64), (64, 128), (128, 256)])
def test_an_accumulator_holds_per_thread_what_the_a_fragment_of_the_next_wgmma_needs(m, n):
    """The FA3 trick: the m x n accumulator and the m x n A (K = n) put every element in the
    same thread and register position, so casting one into the other moves no data."""
    lane, warp, block, register = Wgmma(n).accumulator_fragment(m)
    a_lane, a_warp, a_block, step, position = Wgmma.a_fragment(m, n)
    assert np.array_equal(lane, a_lane) and np.array_equal(warp, a_warp)
    assert np.array_equal(block, a_block) and np.array_equal(register, step * 8 + position)
    assert wgmma_a_layout(m, n) == wgmma_accumulator_layout(m, n)


@pytest.mark.parametrize("m, n, group", [(64, 32, 1), (128, 256, 1), (128, 64, 2), (256, 128, 2)])
def test_tcgen05_accumulator_covers_its_lanes_once(m, n, group):
    mma = Tcgen05Mma(m, n, group)
    held = mma.accumulator_layout().evaluate_all((m // group, n))
    cells = set(zip(held["TLane"].ravel().tolist(), held["TCol"].ravel().tolist()))
    assert len(cells) == m // group * n
    assert max(lane for lane, _ in cells) < 128


@pytest.mark.parametrize("make, words", [
    (lambda: MmaSync(32), "has K 8 or 16, got 32"),
    (lambda: MmaSync(16, "f32"), "m16n8k16 takes f16 or bf16 inputs, got 'f32'"),
    (lambda: MmaSync(16).fragments(16, 12, 16), "N=12 is not a multiple of 8"),
    (lambda: Wgmma(260), "wgmma takes N a multiple of 8 in [8, 256], got N=260"),
    (lambda: Wgmma(64, "f64"), "ab_type must be one of"),
    (lambda: Wgmma(64).accumulator_layout(96), "M a positive multiple of 64, got 96"),
    (lambda: wgmma_a_layout(96, 16), "A in registers has M a positive multiple of 64, got 96"),
    (lambda: wgmma_a_layout(64, 24), "K a positive multiple of 16 (16-bit inputs), got 24"),
    (lambda: Tcgen05Mma(96, 64), "takes M in (64, 128), got M=96"),
    (lambda: Tcgen05Mma(128, 24, 2), "takes N a multiple of 16 in [16, 256], got N=24"),
])
def test_a_shape_the_family_lacks_is_refused(make, words):
    with pytest.raises(LayoutError, match=re.escape(words)):
        make()

"""The Hopper GEMMs' machine code (CPU: ptxas + nvdisasm, no GPU): the main loop is HGMMA fed
by TMA (UTMALDG) — no global loads and no shared-memory stores by threads, which would mean
operands travelling through registers — v6 and v7 write back by TMA store (UTMASTG, no STG),
v7 loads B by multicast TMA, and v8's global loads and stores (its split-K fix-up) all
come after its last HGMMA."""

import collections
import re

import pytest

import tilemlir
from tilemlir.kernels.hgemm_hopper import hgemm_v4, hgemm_v5, hgemm_v6, hgemm_v7, hgemm_v8
from tilemlir.target.ptx import assemble, disassemble, find_cuda_tool

pytestmark = pytest.mark.skipif(find_cuda_tool("ptxas") is None or
                                find_cuda_tool("nvdisasm") is None,
                                reason="needs ptxas and nvdisasm (pip install '.[test]')")

_OPCODE = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)")


def opcodes(factory, **config) -> collections.Counter:
    kernel = tilemlir.compile(factory(2048, 2048, 2048, **config), target="sm_90a")
    sass = disassemble(assemble(kernel.ptx, "sm_90a"))
    return collections.Counter(_OPCODE.findall(sass))


@pytest.mark.parametrize("factory", [hgemm_v4, hgemm_v5, hgemm_v6, hgemm_v7])
def test_main_loop_is_hgmma_fed_by_tma(factory):
    ops = opcodes(factory)
    assert ops["HGMMA"] > 0 and ops["UTMALDG"] > 0, ops
    assert ops["LDG"] == 0 and ops["STS"] == 0 and ops["LDS"] == 0, ops


@pytest.mark.parametrize("factory", [hgemm_v6, hgemm_v7])
def test_writes_back_by_tma_store(factory):
    ops = opcodes(factory)
    assert ops["UTMASTG"] > 0 and ops["STSM"] > 0, ops
    assert ops["STG"] == 0, ops


def test_v7_multicasts_b_and_frees_stages_in_both_ctas():
    """v7's B loads are multicast TMA (UTMALDG.MULTICAST), and its consumers arrive on the
    peer CTA's barrier through the cluster's shared window (SYNCS.ARRIVE...A1T0 on a remote
    address)."""
    kernel = tilemlir.compile(hgemm_v7(2048, 2048, 2048), target="sm_90a")
    sass = disassemble(assemble(kernel.ptx, "sm_90a"))
    assert re.search(r"UTMALDG\.2D\.MULTICAST", sass), sass


def test_v8_fix_up_follows_the_tma_fed_main_loop():
    """v8's partial sums travel through global memory (STG, LDG), but only after the main loop:
    every LDG and STG lies after the last HGMMA; operands still reach HGMMA only by TMA, and
    the result leaves by TMA store."""
    kernel = tilemlir.compile(hgemm_v8(1000, 1000, 8192, SPLIT_K=4), target="sm_90a")
    sass = disassemble(assemble(kernel.ptx, "sm_90a"))
    ops = _OPCODE.findall(sass)
    counts = collections.Counter(ops)
    assert counts["HGMMA"] > 0 and counts["UTMALDG"] > 0 and counts["UTMASTG"] > 0, counts
    assert counts["STS"] == 0 and counts["LDS"] == 0, counts
    assert counts["LDG"] > 0 and counts["STG"] > 0, counts
    last_hgmma = max(i for i, op in enumerate(ops) if op == "HGMMA")
    assert min(i for i, op in enumerate(ops) if op in ("LDG", "STG")) > last_hgmma

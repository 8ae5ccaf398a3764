"""The Hopper GEMMs' machine code (CPU: ptxas + nvdisasm, no GPU): the main loop is HGMMA fed
by TMA (UTMALDG) — no global loads and no shared-memory stores by threads, which would mean
operands travelling through registers — v6 and v7 write back by TMA store (UTMASTG, no STG),
and v7 loads B by multicast TMA."""

import collections
import re

import pytest

import tilemlir
from tilemlir.kernels.hgemm_hopper import hgemm_v4, hgemm_v5, hgemm_v6, hgemm_v7
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

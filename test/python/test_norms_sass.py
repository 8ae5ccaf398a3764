"""Softmax's machine code on Hopper (CPU: ptxas + nvdisasm, no GPU), at the row length where it
used to fall short of a copy's bandwidth (16384): the per-element work (16-bit rows: exp as
ex2.approx.ftz, two instructions; float32 rows: exp in eight; bf16 widened by shifts, f32 ->
bf16 in packed pairs) and the registers, which decide how many rows an SM holds at once.
Before exp's rewrite bf16 took 81 registers a thread (allocated as 88: two CTAs of 256
threads per SM instead of three) and 26 instructions per element; on the H200 that was 68% of
a copy's bandwidth, f16 at 80 registers 85%."""

import collections
import re

import pytest

import tilemlir
from tilemlir.kernels.norms import row_plan, softmax, softmax_per_thread
from tilemlir.target.ptx import assemble, disassemble, find_cuda_tool, resource_usage

pytestmark = pytest.mark.skipif(find_cuda_tool("ptxas") is None or
                                find_cuda_tool("nvdisasm") is None,
                                reason="needs ptxas and nvdisasm (pip install '.[test]')")

_OPCODE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)")
REGISTER_FILE = 65536               # 32-bit registers per SM (sm_90)
N = 16384


def _compiled(dtype):
    ptx = tilemlir.compile(softmax(64, N, dtype), target="sm_90a").ptx
    ops = collections.Counter(_OPCODE.findall(disassemble(assemble(ptx, "sm_90a"))))
    return ops, resource_usage(ptx, "sm_90a")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_softmax_per_element_work(dtype):
    ops, _ = _compiled(dtype)
    per_thread = softmax_per_thread(N)
    # exp: FADD (x - max), FMUL (log2 e), MUFU.EX2: no range reduction (softmax_fast_exp;
    # the one FFMA.RM left is 1 / sum's)
    assert ops["MUFU.EX2"] == per_thread, ops
    assert not ops["FFMA.SAT"] and ops["FFMA.RM"] <= 1 and not ops["FRND"], ops
    # bf16 -> f32 is a shift or a byte permute, f16 -> f32 a HADD2.F32; f32 -> 16 bits in pairs
    assert not ops["F2F.F32.BF16"] and not ops["F2F.F32.F16"], ops
    pack = "F2FP.BF16.F32.PACK_AB" if dtype == "bfloat16" else "F2FP.F16.F32.PACK_AB"
    assert ops[pack] == per_thread // 2, ops
    # 10.5 per element for bf16, 10 for f16 (16.5 and 16 with the 8-instruction exp, 26.5 and
    # 26 before that); the rest is the row's loads, stores and the two CTA reductions
    assert sum(ops.values()) <= 11 * per_thread, sum(ops.values())


def test_float32_softmax_keeps_the_exp_within_2_ulp():
    ops, _ = _compiled("float32")
    per_thread = softmax_per_thread(N)
    # exp: FFMA.SAT (clamp and scale), FFMA.RM (floor), FADD (-n), SHF.L (2^n), 2 FFMA,
    # MUFU.EX2, FMUL; no FRND / F2I (rint and the float -> int conversion of the old range
    # reduction)
    assert ops["MUFU.EX2"] == per_thread and ops["FFMA.SAT"] == per_thread, ops
    assert ops["FFMA.RM"] >= per_thread and not ops["FRND"] and not ops["F2I.NTZ"], ops
    assert sum(ops.values()) <= 15 * per_thread, sum(ops.values())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_softmax_16384_keeps_three_rows_per_sm(dtype):
    _, usage = _compiled(dtype)
    warps = row_plan(N).warps
    assert warps == 8
    allocated = -(-usage.registers // 8) * 8            # per warp, in steps of 8 a thread
    assert 3 * warps * 32 * allocated <= REGISTER_FILE, usage
    assert usage.spill_stores == usage.spill_loads == 0, usage

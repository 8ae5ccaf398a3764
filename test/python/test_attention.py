"""flash_attention on the CPU: what it cannot build is refused up front with the reason; what it
builds compiles to sm_90a PTX that ptxas assembles without spills, with the softmax between the
two wgmma chains and P V reading P from registers and V transposed from shared memory."""

import os
import re
import subprocess
import tempfile

import pytest

import tilemlir
from tilemlir.kernels.attention import ShapeError, attention, flash_attention
from tilemlir.runtime.args import ArgumentError
from tilemlir.target.ptx import find_ptxas


def ptxas_warnings(ptx: str) -> str:
    """ptxas -v's messages for sm_90a ('' without ptxas)."""
    ptxas = find_ptxas()
    if ptxas is None:
        return ""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        done = subprocess.run([ptxas, "-arch=sm_90a", "-v", path, "-o", path + ".cubin"],
                              capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stderr


def compiled(*args, **kwargs):
    return tilemlir.compile(flash_attention(*args, **kwargs), target="sm_90a", cache=False)


@pytest.mark.parametrize("args, kwargs, message", [
    ((1, 1, 256, 96), {}, "head dim D=96 must be 64 or 128"),
    ((1, 1, 200, 64), {}, "S=200 must be a multiple of 128"),
    ((1, 1, 256, 64), dict(dtype="float32"), "dtype must be one of"),
    ((0, 1, 256, 64), {}, "B=0 must be a positive integer"),
    ((1, 1, 256, 128), dict(STAGES=4), "4 stages of K and V at D=128 need"),
    ((1, 1, 256, 64), dict(STAGES=0), "STAGES=0 must be at least 1"),
    ((1, 1, 256, 64), dict(SMS=0), "SMS=0 must be a positive integer"),
])
def test_refused_with_the_reason(args, kwargs, message):
    with pytest.raises(ShapeError, match=re.escape(message)):
        flash_attention(*args, **kwargs)


@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_compiles_to_wgmma_chains_around_the_softmax(D, causal, dtype):
    kernel = compiled(2, 3, 512, D, dtype, causal=causal)
    ptx = kernel.ptx
    chunks = D // 64
    elem = "f16" if dtype == "float16" else "bf16"
    # Q K^T: 64 x 128 from shared memory, 4 k16 steps per 64 columns of D; P V: 64 x D with
    # A (P) in registers ("{...}" operand list), 8 k16 steps. Each appears twice: the
    # pipelined loop and its prologue (Q K^T of block 0) or tail (P V of the last block).
    wgmma = rf"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.{elem}\.{elem}\s+\{{[^}}]*\}},\s*"
    ss = re.findall(wgmma + r"%rd", ptx)
    rs = re.findall(wgmma + r"\{", ptx)
    assert ss == ["128"] * (2 * 4 * chunks)
    assert rs == [str(D)] * (2 * 8)
    # the exponentials in base 2 (fast), row max and sum by two butterflies each
    assert ptx.count("ex2.approx") >= 64
    assert len(re.findall(r"shfl\.sync\.bfly\.b32\s+%r\d+, %r\d+, [12], 31, -1", ptx)) >= 8
    if causal:
        assert "selp" in ptx or "setp" in ptx
    # TMA for Q, K and V: one tensor map per input, box 128 rows x 64 columns, 128B swizzle
    maps = [(r.param, r.box, r.swizzle) for r in kernel.signature.tensor_maps]
    assert maps == [(0, (128, 64), 128), (1, (128, 64), 128), (2, (128, 64), 128)]
    assert "C7514" not in ptxas_warnings(ptx)    # no wgmma serialised by register reads


@pytest.mark.parametrize("B, H, S, grid", [(2, 3, 512, 24), (8, 16, 4096, 132)])
def test_the_grid_is_persistent(B, H, S, grid):
    # one CTA per SM at most, each taking every grid-th (head, query block) item
    assert compiled(B, H, S, 64).signature.grid == (grid, 1, 1)


def test_front_door_names_the_bad_argument():
    torch = pytest.importorskip("torch")
    q = torch.zeros(1, 1, 128, 64, dtype=torch.float16)
    with pytest.raises(ArgumentError, match="q must be a torch CUDA tensor, got Tensor"):
        attention(q, q, q)
    with pytest.raises(ArgumentError, match="q must be a torch CUDA tensor, got ndarray"):
        attention(q.numpy(), q, q)


@pytest.mark.parametrize("pingpong", [True, False])
def test_consumers_take_turns_issuing_their_wgmma(pingpong):
    ptx = compiled(1, 2, 512, 64, PINGPONG=pingpong).ptx
    turns = re.findall(r"bar\.sync\s+%r\d+, 256;", ptx)
    # pipelined: a turn for the first Q K^T, for each loop step and for the last P V
    assert len(turns) == (3 if pingpong else 0)
    assert ("bar.arrive" in ptx) == pingpong

"""tile.gemm_async through wgmma (sm_90a), compiled here and run on a Hopper GPU.

One warpgroup stages A (M x K) and B (N x K) from global memory into shared memory in an MMA
layout (through registers, with the element-wise tile.copy: the staging copies are pinned to
that variant so that only gemm_async is under test), fences the generic-proxy writes for the
async proxy, runs tile.gemm_async, waits for the wgmma group and stores D (registers in the
wgmma accumulator fragment) to global memory. The result is compared with torch in float32
(rtol 2e-2, atol 1e-2) after poisoning D with NaN.

The kernels cover: K = 64 in one call (accum false), K = 128 as a loop over two 64-wide
slices of the shared tiles with accum = (k != 0) (dynamic), two M blocks and accum true
(two calls, false then true: D = 2 A.B^T), the 128B / 64B / 32B / interleaved layouts, bf16.
The compile-only test runs everywhere; the GPU test needs sm_90a.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tilemlir.layout import mma_shared_layout
from tilemlir.layout.instructions import wgmma_accumulator_layout

THREADS = 128
LOOP_K = 64
DYNAMIC = -9223372036854775808


@dataclass(frozen=True)
class Case:
    m: int
    n: int
    k: int
    swizzle: str
    dtype: str = "f16"
    schedule: str = "once"          # "once" | "twice" (accum false, then true) | "loop" (K / 64)

    @property
    def name(self) -> str:
        return f"m{self.m}n{self.n}k{self.k}_{self.swizzle}_{self.dtype}_{self.schedule}"

    @property
    def scale(self) -> float:
        return 2.0 if self.schedule == "twice" else 1.0


CASES = [
    Case(64, 128, 64, "128B"),
    Case(64, 128, 128, "128B", schedule="loop"),
    Case(128, 64, 64, "64B", schedule="twice"),
    Case(64, 64, 64, "32B", dtype="bf16"),
    Case(64, 32, 32, "none"),
]


def _buf(shape, dtype, scope, layout) -> str:
    dims = ", ".join(map(str, shape))
    return f'!tile.buf<array<i64: {dims}>, {dtype}, "{scope}", #tile.layout<"{layout}">>'


def _staging(rows: int, k: int) -> str:
    """Registers of the warpgroup holding a (rows, k) tile: rows over the 128 threads."""
    if rows >= THREADS:
        return f"S[({rows}, {k}):(1@tid_in_wg, 1)]"
    split = THREADS // rows
    return f"S[({rows}, {split}, {k // split}):({split}@tid_in_wg, 1@tid_in_wg, 1)]"


def kernel_text(case: Case) -> str:
    m, n, k, t = case.m, case.n, case.k, case.dtype
    a_smem = mma_shared_layout(16, case.swizzle, (m, k))
    b_smem = mma_shared_layout(16, case.swizzle, (n, k))
    b_offset = -(-m * k * 2 // 1024) * 1024
    types = {
        "Ag": _buf((m, k), t, "global", f"S[({m}, {k}):({k}, 1)]"),
        "Bg": _buf((n, k), t, "global", f"S[({n}, {k}):({k}, 1)]"),
        "Dg": _buf((m, n), "f32", "global", f"S[({m}, {n}):({n}, 1)]"),
        "Ar": _buf((m, k), t, "local", _staging(m, k)),
        "Br": _buf((n, k), t, "local", _staging(n, k)),
        "As": _buf((m, k), t, "shared", a_smem),
        "Bs": _buf((n, k), t, "shared", b_smem),
        "D": _buf((m, n), "f32", "local", wgmma_accumulator_layout(m, n)),
    }
    gemm = '"tile.gemm_async"(%d, {a}, {b}, {acc}) {{cta_group = 1 : i64, scope = "warpgroup", transpose_b = false}}' \
           ' : (!D, {at}, {bt}, i1) -> ()'
    wait = '"tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()'
    if case.schedule == "loop":
        region = [(0, m), (0, LOOP_K)]
        types["Ak"] = _buf((m, LOOP_K), t, "shared", a_smem.slice((m, k), region))
        types["Bk"] = _buf((n, LOOP_K), t, "shared", b_smem.slice((n, k), [(0, n), (0, LOOP_K)]))
        offsets = f"{{static_offsets = array<i64: 0, {DYNAMIC}>}}"
        body = [
            "scf.for %k0 = %c0 to %cK step %cLOOP {",
            f'  %ak = "tile.slice"(%a_s, %k0) {offsets} : (!As, index) -> !Ak',
            f'  %bk = "tile.slice"(%b_s, %k0) {offsets} : (!Bs, index) -> !Bk',
            "  %acc = arith.cmpi ne, %k0, %c0 : index",
            "  " + gemm.format(a="%ak", b="%bk", acc="%acc", at="!Ak", bt="!Bk"),
            "  " + wait,
            "}",
        ]
    else:
        calls = ["%false"] if case.schedule == "once" else ["%false", "%true"]
        body = [gemm.format(a="%a_s", b="%b_s", acc=acc, at="!As", bt="!Bs") for acc in calls]
        body.append(wait)
    aliases = "\n".join(f"!{name} = {text}" for name, text in types.items())
    staged = '{dispatch = "elementwise", scope = "warpgroup"}'
    lines = [
        '%a_g = "tile.global"(%A) : (!llvm.ptr) -> !Ag',
        '%b_g = "tile.global"(%B) : (!llvm.ptr) -> !Bg',
        '%d_g = "tile.global"(%D) : (!llvm.ptr) -> !Dg',
        '%a_s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !As',
        f'%b_s = "tile.alloc_shared"() {{offset = {b_offset} : i64}} : () -> !Bs',
        '%a_r = "tile.alloc_local"() : () -> !Ar',
        '%b_r = "tile.alloc_local"() : () -> !Br',
        '%d = "tile.alloc_local"() : () -> !D',
        "%c0 = arith.constant 0 : index",
        f"%cK = arith.constant {k} : index",
        f"%cLOOP = arith.constant {LOOP_K} : index",
        "%false = arith.constant false",
        "%true = arith.constant true",
        f'"tile.copy"(%a_r, %a_g) {staged} : (!Ar, !Ag) -> ()',
        f'"tile.copy"(%a_s, %a_r) {staged} : (!As, !Ar) -> ()',
        f'"tile.copy"(%b_r, %b_g) {staged} : (!Br, !Bg) -> ()',
        f'"tile.copy"(%b_s, %b_r) {staged} : (!Bs, !Br) -> ()',
        '"tile.fence"() {kind = "proxy_async_shared"} : () -> ()',
        '"tile.cta_sync"() : () -> ()',
        *body,
        f'"tile.copy"(%d_g, %d) {staged} : (!Dg, !D) -> ()',
        "gpu.return",
    ]
    body_text = "\n".join("      " + line for line in lines)
    return f"""{aliases}
module attributes {{gpu.container_module}} {{
  gpu.module @gemm_async {{
    gpu.func @{case.name}(%A: !llvm.ptr, %B: !llvm.ptr, %D: !llvm.ptr) kernel
        attributes {{known_block_size = array<i32: {THREADS}, 1, 1>,
                    tile.params = ["A", "B", "D"]}} {{
{body_text}
    }}
  }}
}}
"""


def _compile(case: Case):
    from tilemlir.runtime import Executable
    return Executable.from_text(kernel_text(case), "sm_90a")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_kernel_compiles_to_the_wgmma_chain(case):
    from tilemlir.target.ptx import assemble, find_ptxas
    ptx = _compile(case).kernel(case.name).ptx
    k_per_call = LOOP_K if case.schedule == "loop" else case.k
    per_call = (case.m // 64) * k_per_call // 16
    total = (case.m // 64) * case.k // 16 * (2 if case.schedule == "twice" else 1)
    count = ptx.count(f"wgmma.mma_async.sync.aligned.m64n{case.n}k16.f32.{case.dtype}.{case.dtype}")
    # LLVM may unroll the two-trip K loop: one or two copies of its wgmma chain
    assert count in {per_call, total}
    assert ptx.count("wgmma.mma_async") == count
    if find_ptxas():
        assemble(ptx, "sm_90a")


@pytest.fixture(scope="module")
def torch_on_sm90a():
    from tilemlir.runtime.cuda import device_chip
    chip = device_chip()
    if chip != "sm_90a":
        pytest.skip(f"wgmma runs on sm_90a only; this GPU is {chip}")
    return pytest.importorskip("torch")


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gemm_async_wgmma_matches_torch(torch_on_sm90a, case):
    torch = torch_on_sm90a
    from gpu_check import check
    kernel = _compile(case).kernel(case.name)
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[case.dtype]
    gen = torch.Generator(device="cuda").manual_seed(case.m * 1000 + case.n + case.k)
    a = torch.randn(case.m, case.k, device="cuda", generator=gen).to(dtype)
    b = torch.randn(case.n, case.k, device="cuda", generator=gen).to(dtype)
    ref = case.scale * (a.float() @ b.float().T)
    check(kernel, [a, b], ref, torch.float32, rtol=2e-2, atol=1e-2)

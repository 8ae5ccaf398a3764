"""tile.gemm_async through wgmma with the operand forms attention needs: B MN-major in shared
memory (transpose_b: B is K x N, D (+)= A . B) and A in registers (wgmma_a_layout), compiled
here (PTX checked and assembled by ptxas) and run on a Hopper GPU.

The kernels are those of test_gemm_async_gpu.py (one warpgroup; operands staged global ->
registers -> shared with the element-wise tile.copy, pinned, so that only gemm_async is under
test; D poisoned with NaN and compared with torch in float32), with two more operand paths: a
transposed B is staged from a row-major (K, N) global tile into the MMA layout of a (K, N)
tile (mma_shared_layout(16, mode, (K, N)): N-chunks one swizzle row wide, one after another),
and a register A is copied from global memory straight into wgmma_a_layout(M, K). "loop" runs
K in two 64-row windows of the shared tiles with accum = (k != 0): for a transposed B that is
a row window of the (K, N) tile, whose chunks are then K rows apart (the stage-of-a-ring case).
The attention case chains S = Q . K^T (shared A and B), P = f16(S) by tile.cast in place (the
accumulator fragment is the A fragment), O = P . V (P in registers, V transposed).
"""

import re
from dataclasses import dataclass

import pytest

import tilemlir.lang as T
from tilemlir.layout import mma_shared_layout
from tilemlir.layout.instructions import wgmma_a_layout, wgmma_accumulator_layout

# the same kernel-text helpers and constants
from test_gemm_async_gpu import DYNAMIC, LOOP_K, THREADS, _buf, _staging  # noqa: E402


@dataclass(frozen=True)
class Case:
    m: int
    n: int
    k: int
    swizzle: str
    a_in: str = "shared"            # "shared" | "local" (registers)
    transpose_b: bool = False
    dtype: str = "f16"
    schedule: str = "once"          # "once" | "twice" (accum false, then true) | "loop" (K / 64)

    @property
    def name(self) -> str:
        form = ("rs" if self.a_in == "local" else "ss") + ("_tb" if self.transpose_b else "_kb")
        return f"{form}_m{self.m}n{self.n}k{self.k}_{self.swizzle}_{self.dtype}_{self.schedule}"

    @property
    def scale(self) -> float:
        return 2.0 if self.schedule == "twice" else 1.0


CASES = [
    # B MN-major, A in shared memory
    Case(64, 64, 64, "128B", transpose_b=True),
    Case(64, 128, 64, "128B", transpose_b=True),                      # N over two atoms
    Case(64, 128, 128, "128B", transpose_b=True, schedule="loop"),    # row windows of B
    Case(128, 64, 128, "128B", transpose_b=True, dtype="bf16", schedule="twice"),
    Case(64, 64, 32, "64B", transpose_b=True),
    Case(64, 32, 32, "32B", transpose_b=True, dtype="bf16"),
    Case(64, 32, 32, "none", transpose_b=True),
    # A in registers, B K-major
    Case(64, 128, 64, "128B", a_in="local"),
    Case(128, 64, 128, "64B", a_in="local", dtype="bf16", schedule="twice"),
    # A in registers, B MN-major (attention's P . V)
    Case(64, 64, 128, "128B", a_in="local", transpose_b=True),
    Case(64, 128, 64, "128B", a_in="local", transpose_b=True, dtype="bf16"),
    Case(128, 128, 128, "128B", a_in="local", transpose_b=True, schedule="twice"),
]


def _align(nbytes: int) -> int:
    return -(-nbytes // 1024) * 1024


def kernel_text(case: Case) -> str:
    m, n, k, t = case.m, case.n, case.k, case.dtype
    b_shape = (k, n) if case.transpose_b else (n, k)
    b_smem = mma_shared_layout(16, case.swizzle, b_shape)
    if case.a_in == "shared":
        a_layout = mma_shared_layout(16, case.swizzle, (m, k))
    else:
        a_layout = wgmma_a_layout(m, k)
    types = {
        "Ag": _buf((m, k), t, "global", f"S[({m}, {k}):({k}, 1)]"),
        "Bg": _buf(b_shape, t, "global", f"S[({b_shape[0]}, {b_shape[1]}):({b_shape[1]}, 1)]"),
        "Dg": _buf((m, n), "f32", "global", f"S[({m}, {n}):({n}, 1)]"),
        "Ar": _buf((m, k), t, "local", _staging(m, k)),
        "Br": _buf(b_shape, t, "local", _staging(*b_shape)),
        "As": _buf((m, k), t, case.a_in, a_layout),
        "Bs": _buf(b_shape, t, "shared", b_smem),
        "D": _buf((m, n), "f32", "local", wgmma_accumulator_layout(m, n)),
    }
    attrs = (f'{{{{cta_group = 1 : i64, scope = "warpgroup", '
             f'transpose_b = {str(case.transpose_b).lower()}}}}}')
    gemm = '"tile.gemm_async"(%d, {a}, {b}, {acc}) ' + attrs + ' : (!D, {at}, {bt}, i1) -> ()'
    wait = '"tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()'
    staged = '{dispatch = "elementwise", scope = "warpgroup"}'
    if case.a_in == "shared":
        stage_a = [f'"tile.copy"(%a_r, %a_g) {staged} : (!Ar, !Ag) -> ()',
                   f'"tile.copy"(%a_s, %a_r) {staged} : (!As, !Ar) -> ()']
        alloc_a = ['%a_s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !As',
                   '%a_r = "tile.alloc_local"() : () -> !Ar']
        b_offset = _align(m * k * 2)
    else:
        stage_a = [f'"tile.copy"(%a_s, %a_g) {staged} : (!As, !Ag) -> ()']
        alloc_a = ['%a_s = "tile.alloc_local"() : () -> !As']
        del types["Ar"]
        b_offset = 0
    if case.schedule == "loop":
        assert case.a_in == "shared", "register tiles take no dynamic windows"
        types["Ak"] = _buf((m, LOOP_K), t, "shared", a_layout.slice((m, k), [(0, m), (0, LOOP_K)]))
        if case.transpose_b:
            b_window, b_offsets = [(0, LOOP_K), (0, n)], f"array<i64: {DYNAMIC}, 0>"
            bk_shape = (LOOP_K, n)
        else:
            b_window, b_offsets = [(0, n), (0, LOOP_K)], f"array<i64: 0, {DYNAMIC}>"
            bk_shape = (n, LOOP_K)
        types["Bk"] = _buf(bk_shape, t, "shared", b_smem.slice(b_shape, b_window))
        body = [
            "scf.for %k0 = %c0 to %cK step %cLOOP {",
            f'  %ak = "tile.slice"(%a_s, %k0) {{static_offsets = array<i64: 0, {DYNAMIC}>}}'
            f' : (!As, index) -> !Ak',
            f'  %bk = "tile.slice"(%b_s, %k0) {{static_offsets = {b_offsets}}}'
            f' : (!Bs, index) -> !Bk',
            "  %acc = arith.cmpi ne, %k0, %c0 : index",
            "  " + gemm.format(a="%ak", b="%bk", acc="%acc", at="!Ak", bt="!Bk"),
            "  " + wait,
            "}",
        ]
    else:
        calls = ["%false"] if case.schedule == "once" else ["%false", "%true"]
        body = [gemm.format(a="%a_s", b="%b_s", acc=acc, at="!As", bt="!Bs") for acc in calls]
        body.append(wait)
    lines = [
        '%a_g = "tile.global"(%A) : (!llvm.ptr) -> !Ag',
        '%b_g = "tile.global"(%B) : (!llvm.ptr) -> !Bg',
        '%d_g = "tile.global"(%D) : (!llvm.ptr) -> !Dg',
        *alloc_a,
        f'%b_s = "tile.alloc_shared"() {{offset = {b_offset} : i64}} : () -> !Bs',
        '%b_r = "tile.alloc_local"() : () -> !Br',
        '%d = "tile.alloc_local"() : () -> !D',
        "%c0 = arith.constant 0 : index",
        f"%cK = arith.constant {k} : index",
        f"%cLOOP = arith.constant {LOOP_K} : index",
        "%false = arith.constant false",
        "%true = arith.constant true",
        *stage_a,
        f'"tile.copy"(%b_r, %b_g) {staged} : (!Br, !Bg) -> ()',
        f'"tile.copy"(%b_s, %b_r) {staged} : (!Bs, !Br) -> ()',
        '"tile.fence"() {kind = "proxy_async_shared"} : () -> ()',
        '"tile.cta_sync"() : () -> ()',
        *body,
        f'"tile.copy"(%d_g, %d) {staged} : (!Dg, !D) -> ()',
        "gpu.return",
    ]
    return _module(types, case.name, ["A", "B", "D"], lines)


def _module(types: dict, name: str, params: list[str], lines: list[str]) -> str:
    aliases = "\n".join(f"!{alias} = {text}" for alias, text in types.items())
    args = ", ".join(f"%{p}: !llvm.ptr" for p in params)
    names = ", ".join(f'"{p}"' for p in params)
    body_text = "\n".join("      " + line for line in lines)
    return f"""{aliases}
module attributes {{gpu.container_module}} {{
  gpu.module @gemm_async {{
    gpu.func @{name}({args}) kernel
        attributes {{known_block_size = array<i32: {THREADS}, 1, 1>,
                    tile.params = [{names}]}} {{
{body_text}
    }}
  }}
}}
"""


# ------------------------------------------------------------------------------ attention
@dataclass(frozen=True)
class Attention:
    """O = f16(Q . K^T) . V for one 64-row block of queries: S (64 x KV) f32 accumulator, cast
    in place to P in wgmma_a_layout(64, KV), then P . V with V (KV x D) transposed."""
    kv: int
    d: int
    dtype: str = "f16"

    @property
    def name(self) -> str:
        return f"attention_kv{self.kv}_d{self.d}_{self.dtype}"


ATTENTION = [Attention(128, 64), Attention(64, 128, "bf16")]


def attention_text(case: Attention) -> str:
    kv, d, t = case.kv, case.d, case.dtype
    q_smem = mma_shared_layout(16, "128B", (64, d))
    k_smem = mma_shared_layout(16, "128B", (kv, d))
    v_smem = mma_shared_layout(16, "128B", (kv, d))          # (K = kv rows, N = d columns)
    types = {
        "Qg": _buf((64, d), t, "global", f"S[(64, {d}):({d}, 1)]"),
        "KVg": _buf((kv, d), t, "global", f"S[({kv}, {d}):({d}, 1)]"),
        "Og": _buf((64, d), "f32", "global", f"S[(64, {d}):({d}, 1)]"),
        "Qr": _buf((64, d), t, "local", _staging(64, d)),
        "KVr": _buf((kv, d), t, "local", _staging(kv, d)),
        "Qs": _buf((64, d), t, "shared", q_smem),
        "Ks": _buf((kv, d), t, "shared", k_smem),
        "Vs": _buf((kv, d), t, "shared", v_smem),
        "S": _buf((64, kv), "f32", "local", wgmma_accumulator_layout(64, kv)),
        "P": _buf((64, kv), t, "local", wgmma_a_layout(64, kv)),
        "O": _buf((64, d), "f32", "local", wgmma_accumulator_layout(64, d)),
    }
    staged = '{dispatch = "elementwise", scope = "warpgroup"}'
    wg = '{cta_group = 1 : i64, scope = "warpgroup", transpose_b = '
    q_bytes, k_bytes = 64 * d * 2, kv * d * 2
    lines = [
        '%q_g = "tile.global"(%Q) : (!llvm.ptr) -> !Qg',
        '%k_g = "tile.global"(%K) : (!llvm.ptr) -> !KVg',
        '%v_g = "tile.global"(%V) : (!llvm.ptr) -> !KVg',
        '%o_g = "tile.global"(%O) : (!llvm.ptr) -> !Og',
        '%q_s = "tile.alloc_shared"() {offset = 0 : i64} : () -> !Qs',
        f'%k_s = "tile.alloc_shared"() {{offset = {_align(q_bytes)} : i64}} : () -> !Ks',
        f'%v_s = "tile.alloc_shared"() {{offset = {_align(q_bytes) + _align(k_bytes)} : i64}}'
        ' : () -> !Vs',
        '%q_r = "tile.alloc_local"() : () -> !Qr',
        '%kv_r = "tile.alloc_local"() : () -> !KVr',
        '%s = "tile.alloc_local"() : () -> !S',
        '%p = "tile.alloc_local"() : () -> !P',
        '%o = "tile.alloc_local"() : () -> !O',
        "%false = arith.constant false",
        f'"tile.copy"(%q_r, %q_g) {staged} : (!Qr, !Qg) -> ()',
        f'"tile.copy"(%q_s, %q_r) {staged} : (!Qs, !Qr) -> ()',
        f'"tile.copy"(%kv_r, %k_g) {staged} : (!KVr, !KVg) -> ()',
        f'"tile.copy"(%k_s, %kv_r) {staged} : (!Ks, !KVr) -> ()',
        f'"tile.copy"(%kv_r, %v_g) {staged} : (!KVr, !KVg) -> ()',
        f'"tile.copy"(%v_s, %kv_r) {staged} : (!Vs, !KVr) -> ()',
        '"tile.fence"() {kind = "proxy_async_shared"} : () -> ()',
        '"tile.cta_sync"() : () -> ()',
        f'"tile.gemm_async"(%s, %q_s, %k_s, %false) {wg}false}} : (!S, !Qs, !Ks, i1) -> ()',
        '"tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()',
        '"tile.cast"(%p, %s) {scope = "warpgroup"} : (!P, !S) -> ()',
        f'"tile.gemm_async"(%o, %p, %v_s, %false) {wg}true}} : (!O, !P, !Vs, i1) -> ()',
        '"tile.async_wait"() {kind = "wgmma", pending = 0 : i64} : () -> ()',
        f'"tile.copy"(%o_g, %o) {staged} : (!Og, !O) -> ()',
        "gpu.return",
    ]
    return _module(types, case.name, ["Q", "K", "V", "O"], lines)


# ------------------------------------------------------------------------------ tests
def _compile(text: str):
    from tilemlir.runtime import Executable
    return Executable.from_text(text, "sm_90a")


def _assemble(ptx: str) -> None:
    from tilemlir.target.ptx import assemble, find_ptxas
    if find_ptxas():
        assemble(ptx, "sm_90a")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_kernel_compiles_to_the_wgmma_chain(case):
    ptx = _compile(kernel_text(case)).kernel(case.name).ptx
    k_per_call = LOOP_K if case.schedule == "loop" else case.k
    per_call = (case.m // 64) * k_per_call // 16
    total = (case.m // 64) * case.k // 16 * (2 if case.schedule == "twice" else 1)
    t = case.dtype
    head = f"wgmma.mma_async.sync.aligned.m64n{case.n}k16.f32.{t}.{t} "
    chain = [line.strip() for line in ptx.splitlines() if line.strip().startswith(head)]
    assert len(chain) in {per_call, total}     # LLVM may unroll the two-trip K loop
    assert ptx.count("wgmma.mma_async") == len(chain)
    # SS: {D}, descA, descB, p, 1, 1, imm-trans-a, imm-trans-b; RS: {D}, {A x 4}, descB,
    # p, 1, 1, imm-trans-b
    trans_b = int(case.transpose_b)
    if case.a_in == "local":
        operands = [r"\{%r\d+, %r\d+, %r\d+, %r\d+\}", r"%rd\d+", "p", "1", "1", f"{trans_b};"]
    else:
        operands = [r"%rd\d+", r"%rd\d+", "p", "1", "1", "0", f"{trans_b};"]
    pattern = re.compile(re.escape(head) + r",\s*".join([r"\{[^}]*\}", *operands]) + "$")
    assert all(pattern.match(line) for line in chain), chain[0]
    _assemble(ptx)


@pytest.mark.parametrize("case", ATTENTION, ids=lambda c: c.name)
def test_attention_compiles_with_a_packed_cast_between_the_chains(case):
    ptx = _compile(attention_text(case)).kernel(case.name).ptx
    t = case.dtype
    assert ptx.count(f"wgmma.mma_async.sync.aligned.m64n{case.kv}k16.f32.{t}.{t} ") == case.d // 16
    assert ptx.count(f"wgmma.mma_async.sync.aligned.m64n{case.d}k16.f32.{t}.{t} ") == case.kv // 16
    # S (64 x kv, kv / 2 registers per thread) becomes P in pairs: one packed cvt per pair
    assert ptx.count(f"cvt.rn.{t}x2.f32") == case.kv // 4
    _assemble(ptx)


@pytest.fixture(scope="module")
def torch_on_sm90a():
    from tilemlir.runtime.cuda import device_chip
    chip = device_chip()
    if chip != "sm_90a":
        pytest.skip(f"wgmma runs on sm_90a only; this GPU is {chip}")
    return pytest.importorskip("torch")


def _torch_dtype(torch, name: str):
    return {"f16": torch.float16, "bf16": torch.bfloat16}[name]


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gemm_async_operand_forms_match_torch(torch_on_sm90a, case):
    torch = torch_on_sm90a
    from gpu_check import check
    kernel = _compile(kernel_text(case)).kernel(case.name)
    dtype = _torch_dtype(torch, case.dtype)
    gen = torch.Generator(device="cuda").manual_seed(case.m * 1000 + case.n + case.k)
    a = torch.randn(case.m, case.k, device="cuda", generator=gen).to(dtype)
    b_shape = (case.k, case.n) if case.transpose_b else (case.n, case.k)
    b = torch.randn(*b_shape, device="cuda", generator=gen).to(dtype)
    b_kn = b.float() if case.transpose_b else b.float().T
    ref = case.scale * (a.float() @ b_kn)
    check(kernel, [a, b], ref, torch.float32, rtol=2e-2, atol=1e-2)


@pytest.mark.gpu
@pytest.mark.parametrize("case", ATTENTION, ids=lambda c: c.name)
def test_attention_chain_matches_torch(torch_on_sm90a, case):
    torch = torch_on_sm90a
    from gpu_check import check
    kernel = _compile(attention_text(case)).kernel(case.name)
    dtype = _torch_dtype(torch, case.dtype)
    gen = torch.Generator(device="cuda").manual_seed(case.kv + case.d)
    q = (torch.randn(64, case.d, device="cuda", generator=gen) / case.d ** 0.5).to(dtype)
    k = torch.randn(case.kv, case.d, device="cuda", generator=gen).to(dtype)
    v = torch.randn(case.kv, case.d, device="cuda", generator=gen).to(dtype)
    p = (q.float() @ k.float().T).to(dtype)             # the kernel rounds S to P the same way
    ref = p.float() @ v.float()
    check(kernel, [q, k, v], ref, torch.float32, rtol=2e-2, atol=2e-2)


# ------------------------------------------------------------------------------ the language
Tx = T.tile


def attention_kernel(kv: int, d: int, dtype: str):
    """The attention block above in the kernel language, with its operands loaded by TMA as a
    FlashAttention kernel does: V (kv x d) lands in mma_shared_layout(dtype, "128B", (kv, d)),
    one (kv x 64) box per 64 columns, and is B of P . V with transpose_B=True."""
    q_layout = T.mma_shared_layout(dtype, "128B", (64, d))
    kv_layout = T.mma_shared_layout(dtype, "128B", (kv, d))
    tile_bytes = (64 + 2 * kv) * d * 2

    @T.prim_func
    def attention(Q: T.Buffer((64, d), dtype), K: T.Buffer((kv, d), dtype),
                  V: T.Buffer((kv, d), dtype), O: T.Buffer((64, d), "float32")):
        T.cta_id([1])
        warp = T.warp_id_in_wg([4])
        pool = T.SMEMPool()
        bar = pool.alloc((1,), "uint64", align=8)
        pool.move_base_to(1024)
        Qs = pool.alloc((64, d), dtype, layout=q_layout)
        Ks = pool.alloc((kv, d), dtype, layout=kv_layout)
        Vs = pool.alloc((kv, d), dtype, layout=kv_layout)
        pool.commit()
        if warp == 0:
            if T.ptx.elect_sync():
                T.ptx.mbarrier.init(bar.ptr_to([0]), 1)
        T.ptx.fence.mbarrier_init()
        T.cuda.cta_sync()
        if warp == 0:
            if T.ptx.elect_sync():
                T.ptx.mbarrier.arrive_expect_tx(bar.ptr_to([0]), tile_bytes)
                Tx.copy_async(Qs[:, :], Q[:, :], bar.ptr_to([0]))
                Tx.copy_async(Ks[:, :], K[:, :], bar.ptr_to([0]))
                Tx.copy_async(Vs[:, :], V[:, :], bar.ptr_to([0]))
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)
        S = T.alloc_local((64, kv), "float32", layout=T.wgmma_accumulator_layout(64, kv))
        Tx.wg.gemm_async(S, Qs[:, :], Ks[:, :], accum=False)
        T.ptx.wgmma.wait_group(0)
        P = T.alloc_local((64, kv), dtype, layout=T.wgmma_a_layout(64, kv))
        Tx.wg.cast(P, S)
        Out = T.alloc_local((64, d), "float32", layout=T.wgmma_accumulator_layout(64, d))
        Tx.wg.gemm_async(Out, P, Vs[:, :], accum=False, transpose_B=True)
        T.ptx.wgmma.wait_group(0)
        Tx.wg.copy(O[:, :], Out)

    return attention


LANGUAGE = [(128, 128, "float16"), (64, 64, "bfloat16")]


@pytest.mark.parametrize("kv, d, dtype", LANGUAGE)
def test_attention_in_the_language_compiles(kv, d, dtype):
    import tilemlir
    kernel = attention_kernel(kv, d, dtype)
    text = str(kernel.build())
    assert text.count("transpose_b = true") == 1 and text.count("transpose_b = false") == 1
    ptx = tilemlir.compile(kernel, target="sm_90a", cache=False).ptx
    t = {"float16": "f16", "bfloat16": "bf16"}[dtype]
    assert ptx.count(f"cvt.rn.{t}x2.f32") == kv // 4
    assert ptx.count(f"wgmma.mma_async.sync.aligned.m64n{d}k16.f32.{t}.{t} ") >= kv // 16
    assert re.search(r"\{%r\d+, %r\d+, %r\d+, %r\d+\}, %rd\d+, p, 1, 1, 1;", ptx)
    _assemble(ptx)


@pytest.mark.parametrize("kv, d", [(128, 128), (64, 64)])
def test_attention_in_the_language_runs_in_the_interpreter(kv, d):
    """tilemlir.interpret (numpy) reads P from the registers its layout names and B as K x N."""
    import numpy as np
    import tilemlir
    np_dtype, dtype = np.float16, "float16"          # numpy has no bfloat16 arrays
    rng = np.random.default_rng(kv + d)
    q = (rng.standard_normal((64, d)) / d ** 0.5).astype(np_dtype)
    k = rng.standard_normal((kv, d)).astype(np_dtype)
    v = rng.standard_normal((kv, d)).astype(np_dtype)
    out = np.full((64, d), np.nan, np.float32)
    tilemlir.interpret(attention_kernel(kv, d, dtype), q, k, v, out)
    p = (q.astype(np.float32) @ k.astype(np.float32).T).astype(np_dtype).astype(np.float32)
    np.testing.assert_allclose(out, p @ v.astype(np.float32), rtol=1e-5, atol=1e-5)


def test_transpose_b_must_be_a_bool():
    layout = T.mma_shared_layout("float16", "128B", (64, 64))

    @T.prim_func
    def bad(O: T.Buffer((64, 64), "float32")):
        T.cta_id([1])
        T.warp_id_in_wg([4])
        pool = T.SMEMPool()
        As = pool.alloc((64, 64), "float16", layout=layout)
        pool.commit()
        acc = T.alloc_local((64, 64), "float32", layout=T.wgmma_accumulator_layout(64, 64))
        Tx.wg.gemm_async(acc, As[:, :], As[:, :], transpose_B=1)

    with pytest.raises(T.KernelError, match="transpose_B must be True or False, got 1"):
        bad.build()


@pytest.mark.gpu
@pytest.mark.parametrize("kv, d, dtype", LANGUAGE)
def test_attention_in_the_language_matches_torch(torch_on_sm90a, kv, d, dtype):
    torch = torch_on_sm90a
    import tilemlir
    from gpu_check import check
    kernel = tilemlir.compile(attention_kernel(kv, d, dtype), target="sm_90a")
    tdtype = _torch_dtype(torch, {"float16": "f16", "bfloat16": "bf16"}[dtype])
    gen = torch.Generator(device="cuda").manual_seed(kv * 7 + d)
    q = (torch.randn(64, d, device="cuda", generator=gen) / d ** 0.5).to(tdtype)
    k = torch.randn(kv, d, device="cuda", generator=gen).to(tdtype)
    v = torch.randn(kv, d, device="cuda", generator=gen).to(tdtype)
    ref = (q.float() @ k.float().T).to(tdtype).float() @ v.float()
    check(kernel, [q, k, v], ref, torch.float32, rtol=2e-2, atol=2e-2)

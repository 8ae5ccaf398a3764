"""The copies that feed mma.sync, on the GPU: hand-written tile-IR kernels, outputs poisoned.

    global --(tile.copy cooperative | tile.copy_async cp.async)--> shared, 128B swizzle
           --(ldmatrix, .trans where the fragment runs across memory)--> registers
           --(tile.gemm, mma.sync)--> f32 accumulator --(vector_registers)--> global

for f16 and bf16 and the four transpose combinations, a K loop of two 64-wide stages with
warp-dependent row offsets; an ldmatrix identity (x4 / x2 / x1, plain and .trans); a stmatrix
round trip (sm_90+) and a cast + fill kernel.
"""

import functools

import pytest

from tilemlir.layout import parse_layout

pytestmark = pytest.mark.gpu
torch = pytest.importorskip("torch")

from gpu_check import assert_matches, check, run_poisoned  # noqa: E402  (needs torch)

DYN = -9223372036854775808
SWIZZLED = "S[(64, 64):(64, 1)] o Sw<3,3,3>"      # mma_shared_layout(16, "128B", (64, 64))
A_ATOM = parse_layout("S[(2, 8, 2, 4, 2):(2, 4@laneid, 4, 1@laneid, 1)]")     # (M, K) 16x16
B_ATOM = parse_layout("S[(2, 4, 2, 8):(2, 1@laneid, 1, 4@laneid)]")            # (K, N) 16x8
D_ATOM = parse_layout("S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]")            # (M, N) 16x8
B_K8 = parse_layout("S[(4, 2, 8):(1@laneid, 1, 4@laneid)]")                  # (K, N) 8x8
MLIR_TYPE = {"float16": "f16", "bfloat16": "bf16"}

# Register fragments loaded by each warp: (atom, atom shape, shape, seen transposed, window step
# per warp along (rows, cols)) -> the ldmatrix form the variant must pick.
FRAGMENTS = {
    "A.x4": (A_ATOM, (16, 16), (16, 64), False, (16, 0)),
    "At.x4.trans": (A_ATOM, (16, 16), (16, 64), True, (0, 16)),
    "B.x4.trans": (B_ATOM, (16, 8), (64, 64), False, (0, 0)),
    "Bt.x4": (B_ATOM, (16, 8), (64, 64), True, (0, 0)),
    "B_n8.x2.trans": (B_ATOM, (16, 8), (16, 8), False, (16, 0)),
    "Bt_n8.x2": (B_ATOM, (16, 8), (16, 8), True, (16, 0)),
    "B_k8.x1.trans": (B_K8, (8, 8), (8, 8), False, (16, 0)),
    "Bt_k8.x1": (B_K8, (8, 8), (8, 8), True, (16, 0)),
}


def buf(shape, elem, scope, layout) -> str:
    dims = ", ".join(str(d) for d in shape)
    return f'!tile.buf<array<i64: {dims}>, {elem}, "{scope}", #tile.layout<"{layout}">>'


def row_major(shape, row_stride=None) -> str:
    return f"S[({shape[0]}, {shape[1]}):({row_stride or shape[1]}, 1)]"


def fragment(atom, atom_shape, shape, transposed: bool) -> tuple[tuple[int, int], str]:
    """(buffer shape, layout) of `atom` tiled to `shape`, seen transposed if asked."""
    layout = atom.tile_to(shape, atom_shape)
    if transposed:
        return (shape[1], shape[0]), str(layout.permute_by_groups(shape, (1, 0)))
    return shape, str(layout)


def _stage(name, glob, sm, g_shape, s_shape, k_dim, loader) -> list[str]:
    """Copy the 64x64 window of `glob` at k (along g's dim k_dim) into `sm`."""
    window = buf(s_shape, "ELEM", "global", row_major(s_shape, g_shape[1]))
    offsets = ("0", str(DYN)) if k_dim == 1 else (str(DYN), "0")
    lines = [f'%{name}_w = "tile.slice"({glob}, %k) {{static_offsets = array<i64: {", ".join(offsets)}>}} '
             f': ({buf(g_shape, "ELEM", "global", row_major(g_shape))}, index) -> {window}']
    op = "tile.copy" if loader == "copy" else "tile.copy_async"
    lines.append(f'"{op}"({sm}, %{name}_w) {{scope = "cta"}} : '
                 f'({buf(s_shape, "ELEM", "shared", SWIZZLED)}, {window}) -> ()')
    return lines


def gemm_kernel(dtype: str, ta: bool, tb: bool, loader: str, K: int = 128) -> str:
    """D[64, 64] = op(A) . op(B), 4 warps each owning 16 rows of D, K in 64-wide stages."""
    M = N = 64
    a_g = (K, M) if ta else (M, K)
    b_g = (N, K) if tb else (K, N)
    a_shape, a_layout = fragment(A_ATOM, (16, 16), (16, 64), ta)
    b_shape, b_layout = fragment(B_ATOM, (16, 8), (64, N), tb)
    d_shape, d_layout = fragment(D_ATOM, (16, 8), (16, N), False)
    sm = buf((64, 64), "ELEM", "shared", SWIZZLED)
    a_rows = buf(a_shape, "ELEM", "shared", "S[(64, 16):(64, 1)] o Sw<3,3,3>" if ta
                 else "S[(16, 64):(64, 1)] o Sw<3,3,3>")
    a_f, b_f = buf(a_shape, "ELEM", "local", a_layout), buf(b_shape, "ELEM", "local", b_layout)
    d_f = buf(d_shape, "f32", "local", d_layout)
    d_g = buf((M, N), "f32", "global", row_major((M, N)))
    d_rows = buf((16, N), "f32", "global", row_major((16, N)))
    a_slice = f"{DYN}, 0" if not ta else f"0, {DYN}"
    body = [
        '%tid = gpu.thread_id x',
        '%c0 = arith.constant 0 : index', '%c1 = arith.constant 1 : index',
        '%c16 = arith.constant 16 : index', '%c32 = arith.constant 32 : index',
        '%c64 = arith.constant 64 : index', f'%cK = arith.constant {K} : index',
        '%zero = arith.constant 0.0 : f32',
        '%warp = arith.divui %tid, %c32 : index',
        '%r0 = arith.muli %warp, %c16 : index',
        f'%a = "tile.global"(%A) : (!llvm.ptr) -> {buf(a_g, "ELEM", "global", row_major(a_g))}',
        f'%b = "tile.global"(%B) : (!llvm.ptr) -> {buf(b_g, "ELEM", "global", row_major(b_g))}',
        f'%d = "tile.global"(%D) : (!llvm.ptr) -> {d_g}',
        f'%as = "tile.alloc_shared"() {{offset = 0 : i64}} : () -> {sm}',
        f'%bs = "tile.alloc_shared"() {{offset = 8192 : i64}} : () -> {sm}',
        f'%af = "tile.alloc_local"() : () -> {a_f}',
        f'%bf = "tile.alloc_local"() : () -> {b_f}',
        f'%df = "tile.alloc_local"() : () -> {d_f}',
        f'"tile.fill"(%df, %zero) {{scope = "warp"}} : ({d_f}, f32) -> ()',
        'scf.for %k = %c0 to %cK step %c64 {',
    ]
    body += _stage("a", "%a", "%as", a_g, (64, 64), 0 if ta else 1, loader)
    body += _stage("b", "%b", "%bs", b_g, (64, 64), 1 if tb else 0, loader)
    if loader == "copy_async":
        body += ['"tile.async_commit"() {kind = "cp_async"} : () -> ()',
                 '"tile.async_wait"() {kind = "cp_async", pending = 0 : i64} : () -> ()']
    body += [
        '"tile.cta_sync"() : () -> ()',
        f'%aw = "tile.slice"(%as, %r0) {{static_offsets = array<i64: {a_slice}>}} : ({sm}, index) -> {a_rows}',
        f'"tile.copy"(%af, %aw) {{scope = "warp"}} : ({a_f}, {a_rows}) -> ()',
        f'"tile.copy"(%bf, %bs) {{scope = "warp"}} : ({b_f}, {sm}) -> ()',
        f'"tile.gemm"(%df, %af, %bf, %df) {{alpha = 1.0 : f32, beta = 1.0 : f32, scope = "warp", '
        f'transpose_a = {str(ta).lower()}, transpose_b = {str(tb).lower()}}} '
        f': ({d_f}, {a_f}, {b_f}, {d_f}) -> ()',
        '"tile.cta_sync"() : () -> ()',
        '}',
        f'%dw = "tile.slice"(%d, %r0) {{static_offsets = array<i64: {DYN}, 0>}} : ({d_g}, index) -> {d_rows}',
        f'"tile.copy"(%dw, %df) {{scope = "warp"}} : ({d_rows}, {d_f}) -> ()',
        'gpu.return',
    ]
    return _module("gemm", 128, body).replace("ELEM", MLIR_TYPE[dtype])


def _module(name: str, threads: int, body: list[str], params=("A", "B", "D")) -> str:
    args = ", ".join(f"%{p}: !llvm.ptr" for p in params)
    names = ", ".join(f'"{p}"' for p in params)
    lines = "\n      ".join(body)
    return f"""module attributes {{gpu.container_module}} {{
  gpu.module @copies {{
    gpu.func @{name}({args}) kernel attributes {{known_block_size = array<i32: {threads}, 1, 1>,
        tile.params = [{names}]}} {{
      {lines}
    }}
  }}
}}
"""


def _window(result: str, source: str, source_type: str, window_type: str, step) -> str:
    """`result` = the window of `source` at (step[0] * warp, step[1] * warp)."""
    offsets = ", ".join(str(DYN) if s else "0" for s in step)
    dynamic = ["%r" for s in step if s]
    types = ", ".join([source_type] + ["index"] * len(dynamic))
    return (f'{result} = "tile.slice"({", ".join([source] + dynamic)}) '
            f'{{static_offsets = array<i64: {offsets}>}} : ({types}) -> {window_type}')


def _warp_offset(step) -> list[str]:
    return ['%tid = gpu.thread_id x', '%c32 = arith.constant 32 : index',
            f'%cs = arith.constant {max(step)} : index',
            '%warp = arith.divui %tid, %c32 : index', '%r = arith.muli %warp, %cs : index']


def identity_kernel(dtype: str, shape, layout: str, step, loader: str) -> str:
    """Y = X through shared memory and ldmatrix: warp w loads the `shape` window at `step` * w
    (rows, cols) of a 128B-swizzled 64x64 tile into registers laid out by `layout`, then stores
    it back with the (scalar, obviously correct) elementwise copy."""
    sm = buf((64, 64), "ELEM", "shared", SWIZZLED)
    g = buf((64, 64), "ELEM", "global", row_major((64, 64)))
    win_s = buf(shape, "ELEM", "shared", f"S[({shape[0]}, {shape[1]}):(64, 1)] o Sw<3,3,3>")
    win_g = buf(shape, "ELEM", "global", row_major(shape, 64))
    frag = buf(shape, "ELEM", "local", layout)
    op = "tile.copy" if loader == "copy" else "tile.copy_async"
    body = _warp_offset(step) + [
        f'%x = "tile.global"(%X) : (!llvm.ptr) -> {g}',
        f'%y = "tile.global"(%Y) : (!llvm.ptr) -> {g}',
        f'%s = "tile.alloc_shared"() {{offset = 0 : i64}} : () -> {sm}',
        f'%f = "tile.alloc_local"() : () -> {frag}',
        f'"{op}"(%s, %x) {{scope = "cta"}} : ({sm}, {g}) -> ()',
    ]
    if loader == "copy_async":
        body += ['"tile.async_commit"() {kind = "cp_async"} : () -> ()',
                 '"tile.async_wait"() {kind = "cp_async", pending = 0 : i64} : () -> ()']
    body += [
        '"tile.cta_sync"() : () -> ()',
        _window("%sw", "%s", sm, win_s, step),
        f'"tile.copy"(%f, %sw) {{scope = "warp"}} : ({frag}, {win_s}) -> ()',
        _window("%yw", "%y", g, win_g, step),
        f'"tile.copy"(%yw, %f) {{scope = "warp", dispatch = "elementwise"}} : ({win_g}, {frag}) -> ()',
        'gpu.return',
    ]
    return _module("identity", 128, body, ("X", "Y")).replace("ELEM", MLIR_TYPE[dtype])


def stmatrix_kernel(dtype: str, shape, layout: str, step) -> str:
    """Y = X through registers and stmatrix: warp w reads its `shape` window of X into registers
    (vector copy), stores it with stmatrix into a 128B-swizzled 64x64 shared tile, and the CTA
    copies the tile back out (cooperative copy)."""
    sm = buf((64, 64), "ELEM", "shared", SWIZZLED)
    g = buf((64, 64), "ELEM", "global", row_major((64, 64)))
    win_s = buf(shape, "ELEM", "shared", f"S[({shape[0]}, {shape[1]}):(64, 1)] o Sw<3,3,3>")
    win_g = buf(shape, "ELEM", "global", row_major(shape, 64))
    frag = buf(shape, "ELEM", "local", layout)
    body = _warp_offset(step) + [
        f'%x = "tile.global"(%X) : (!llvm.ptr) -> {g}',
        f'%y = "tile.global"(%Y) : (!llvm.ptr) -> {g}',
        f'%s = "tile.alloc_shared"() {{offset = 0 : i64}} : () -> {sm}',
        f'%f = "tile.alloc_local"() : () -> {frag}',
        _window("%xw", "%x", g, win_g, step),
        f'"tile.copy"(%f, %xw) {{scope = "warp"}} : ({frag}, {win_g}) -> ()',
        _window("%sw", "%s", sm, win_s, step),
        f'"tile.copy"(%sw, %f) {{scope = "warp"}} : ({win_s}, {frag}) -> ()',
        '"tile.cta_sync"() : () -> ()',
        f'"tile.copy"(%y, %s) {{scope = "cta"}} : ({g}, {sm}) -> ()',
        'gpu.return',
    ]
    return _module("stmatrix", 128, body, ("X", "Y")).replace("ELEM", MLIR_TYPE[dtype])


def cast_fill_kernel(dtype: str) -> str:
    """Y = half(X) through an m16n8 accumulator layout (vector loads, packed cvt, vector
    stores); Z = 0.5 everywhere, filled cooperatively into a swizzled shared tile first."""
    elem = MLIR_TYPE[dtype]
    d_shape, d_layout = fragment(D_ATOM, (16, 8), (16, 64), False)
    f32_f, half_f = buf(d_shape, "f32", "local", d_layout), buf(d_shape, elem, "local", d_layout)
    x = buf((64, 64), "f32", "global", row_major((64, 64)))
    y = buf((64, 64), elem, "global", row_major((64, 64)))
    xw = buf((16, 64), "f32", "global", row_major((16, 64)))
    yw = buf((16, 64), elem, "global", row_major((16, 64)))
    sm = buf((64, 64), elem, "shared", SWIZZLED)
    body = [
        '%tid = gpu.thread_id x', '%c32 = arith.constant 32 : index',
        '%c16 = arith.constant 16 : index', f'%half = arith.constant 0.5 : {elem}',
        '%warp = arith.divui %tid, %c32 : index', '%r = arith.muli %warp, %c16 : index',
        f'%x = "tile.global"(%X) : (!llvm.ptr) -> {x}',
        f'%y = "tile.global"(%Y) : (!llvm.ptr) -> {y}',
        f'%z = "tile.global"(%Z) : (!llvm.ptr) -> {y}',
        f'%f = "tile.alloc_local"() : () -> {f32_f}',
        f'%h = "tile.alloc_local"() : () -> {half_f}',
        f'%xw = "tile.slice"(%x, %r) {{static_offsets = array<i64: {DYN}, 0>}} : ({x}, index) -> {xw}',
        f'"tile.copy"(%f, %xw) {{scope = "warp"}} : ({f32_f}, {xw}) -> ()',
        f'"tile.cast"(%h, %f) {{scope = "warp"}} : ({half_f}, {f32_f}) -> ()',
        f'%yw = "tile.slice"(%y, %r) {{static_offsets = array<i64: {DYN}, 0>}} : ({y}, index) -> {yw}',
        f'"tile.copy"(%yw, %h) {{scope = "warp"}} : ({yw}, {half_f}) -> ()',
        f'%s = "tile.alloc_shared"() {{offset = 0 : i64}} : () -> {sm}',
        f'"tile.fill"(%s, %half) {{scope = "cta"}} : ({sm}, {elem}) -> ()',
        '"tile.cta_sync"() : () -> ()',
        f'"tile.copy"(%z, %s) {{scope = "cta"}} : ({y}, {sm}) -> ()',
        'gpu.return',
    ]
    return _module("cast_fill", 128, body, ("X", "Y", "Z"))


# ------------------------------------------------------------------------------ the tests
TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16}
DTYPES = ["float16", "bfloat16"]


@functools.lru_cache(maxsize=None)
def _kernel(text: str, name: str):
    from tilemlir.runtime import Executable
    from tilemlir.runtime.cuda import device_chip
    return Executable.from_text(text, device_chip()).kernel(name)


def _windows(shape, step):
    """The elements the four warps' windows cover."""
    mask = torch.zeros(64, 64, dtype=torch.bool, device="cuda")
    for w in range(4):
        r, c = step[0] * w, step[1] * w
        mask[r:r + shape[0], c:c + shape[1]] = True
    return mask


@pytest.mark.parametrize("loader", ["copy", "copy_async"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ta, tb", [(False, False), (True, False), (False, True), (True, True)])
def test_gemm_fed_through_shared_and_ldmatrix(ta, tb, dtype, loader):
    kernel = _kernel(gemm_kernel(dtype, ta, tb, loader), "gemm")
    ptx = kernel.ptx
    assert "ldmatrix.sync.aligned.m8n8.x4.shared.b16" in ptx or not (tb and not ta)
    assert ("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx) == (ta or not tb)
    assert ("cp.async.cg.shared.global" in ptx) == (loader == "copy_async")
    a = torch.randn(64, 128, device="cuda", dtype=TORCH[dtype])
    b = torch.randn(128, 64, device="cuda", dtype=TORCH[dtype])
    check(kernel, [a.t().contiguous() if ta else a, b.t().contiguous() if tb else b],
          a.double() @ b.double(), torch.float32, rel_error=1e-5)


@pytest.mark.parametrize("loader", ["copy", "copy_async"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(FRAGMENTS))
def test_ldmatrix_identity(name, dtype, loader):
    atom, atom_shape, shape, transposed, step = FRAGMENTS[name]
    frag_shape, layout = fragment(atom, atom_shape, shape, transposed)
    kernel = _kernel(identity_kernel(dtype, frag_shape, layout, step, loader), "identity")
    form = name.split(".", 1)[1]
    assert f"ldmatrix.sync.aligned.m8n8.{form}.shared.b16" in kernel.ptx
    x = torch.randn(64, 64, device="cuda", dtype=TORCH[dtype])
    (y,) = run_poisoned(kernel, [x], [((64, 64), TORCH[dtype])])
    mask = _windows(frag_shape, step)
    assert_matches(y[mask], x[mask])


@pytest.mark.parametrize("name", list(FRAGMENTS))
def test_stmatrix_round_trip(name):
    from tilemlir.runtime.cuda import device_chip
    if int(device_chip()[3:5]) < 90:
        pytest.skip("stmatrix needs sm_90+")
    atom, atom_shape, shape, transposed, step = FRAGMENTS[name]
    frag_shape, layout = fragment(atom, atom_shape, shape, transposed)
    kernel = _kernel(stmatrix_kernel("float16", frag_shape, layout, step), "stmatrix")
    form = name.split(".", 1)[1]
    assert f"stmatrix.sync.aligned.m8n8.{form}.shared.b16" in kernel.ptx
    x = torch.randn(64, 64, device="cuda", dtype=torch.float16)
    (y,) = run_poisoned(kernel, [x], [((64, 64), torch.float16)])
    mask = _windows(frag_shape, step)
    assert_matches(y[mask], x[mask])


@pytest.mark.parametrize("dtype", DTYPES)
def test_cast_and_fill(dtype):
    kernel = _kernel(cast_fill_kernel(dtype), "cast_fill")
    cvt = "cvt.rn.f16x2.f32" if dtype == "float16" else "cvt.rn.bf16x2.f32"
    assert cvt in kernel.ptx
    x = torch.randn(64, 64, device="cuda", dtype=torch.float32)
    y, z = run_poisoned(kernel, [x], [((64, 64), TORCH[dtype])] * 2)
    assert_matches(y, x.to(TORCH[dtype]))
    assert_matches(z, torch.full_like(z, 0.5))

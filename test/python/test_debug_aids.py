"""Debugging aids: T.print (device printf with the Python line) and line info (`.file` / `.loc`
in the PTX, so ncu's source view shows the kernel's Python lines). CPU only: the IR, the PTX,
ptxas and the cubin's sections; the printed output is checked on a GPU (test_debug_print_gpu.py).
"""

import importlib.util
import re
import struct
import textwrap
from pathlib import Path

import pytest

import tilemlir
from tilemlir.kernels import mma_demo
from tilemlir.kernels.hgemm_hopper import hgemm_v6
from tilemlir.lang import KernelError
from tilemlir.target.ptx import assemble, disassemble, find_cuda_tool, find_ptxas

ROOT = Path(__file__).resolve().parents[2]
needs_ptxas = pytest.mark.skipif(find_ptxas() is None, reason="ptxas not found")


def _debug_kernels():
    spec = importlib.util.spec_from_file_location("debug_kernels",
                                                  ROOT / "test" / "Inputs" / "debug_kernels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def printf_formats(ptx: str) -> dict[str, str]:
    """{global name: text} of the printf format strings in `ptx`: byte arrays one longer than
    their initialiser (the rest is zero: the NUL)."""
    found = {}
    pattern = r"\.global \.align 1 \.b8 (printfFormat_\d+)\[(\d+)\] = \{([^}]*)\}"
    for name, size, body in re.findall(pattern, ptx):
        data = bytes(int(b) for b in body.split(","))
        assert int(size) == len(data) + 1 and b"\0" not in data
        found[name] = data.decode()
    return found


# ---------------------------------------------------------------- T.print

def test_print_formats_python_values_now_and_device_values_as_conversions():
    ptx = tilemlir.compile(_debug_kernels().show, target="sm_90a", cache=False,
                           line_info=False).ptx
    assert sorted(printf_formats(ptx).values()) == sorted([
        "[debug_kernels.py:15] tid %lld x = %g n%% %d\n",
        "[debug_kernels.py:16] tid=%lld x=%.3f hex=%04llx shape=(2, 3)\n",
        "[debug_kernels.py:18] last: %g!\n"])
    assert ptx.count("call.uni (retval0), vprintf, (param0, param1);") == 3
    assert ".extern .func  (.param .b32 func_retval0) vprintf" in ptx


def _print_kernel(body: str):
    """A one-warp kernel with `body` (indented 4) after `x = X[tid]`, defined in a real file."""
    source = textwrap.dedent("""\
        import tilemlir.lang as T

        @T.prim_func
        def k(X: T.Buffer((32,), "float16"), Y: T.Buffer((32,), "int64")):
            T.cta_id([1])
            tid = T.thread_id([32])
            x = X[tid]
            y = Y[tid]
        """) + textwrap.indent(textwrap.dedent(body), "    ")
    return source


@pytest.fixture
def kernel_from(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    counter = iter(range(1000))

    def make(body: str):
        name = f"printk{next(counter)}"
        (tmp_path / f"{name}.py").write_text(_print_kernel(body))
        spec = importlib.util.spec_from_file_location(name, tmp_path / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.k
    return make


def test_print_widens_each_type_the_way_printf_takes_it(kernel_from):
    kernel = kernel_from("""\
        b = tid < 3
        T.print(x, y, b, tid, T.int32(5), T.float32(2.5), f"{y:x} {x:e} {tid:5d}")
        """)
    ir_text = kernel.ir()
    (printf,) = [line.strip() for line in ir_text.splitlines() if "gpu.printf" in line]
    assert printf.startswith('gpu.printf "[printk0.py:10] %g %lld %d %lld %d %g %llx %e %5lld\\0A"')
    assert ": f64, i64, i32, i64, i32, f64, i64, f64, i64 loc(" in printf
    assert re.search(r"arith\.extf %\S+ : f16 to f64", ir_text)
    assert re.search(r"arith\.extui %\S+ : i1 to i32", ir_text)


def test_python_f_strings_in_a_kernel_honour_their_format_spec(kernel_from):
    kernel = kernel_from("""\
        T.print(f"{3.14159:.2f}|{7:03d}|{'s'!r}|{x:+.1f}")
        """)
    assert '"[printk0.py:9] 3.14|007|\'s\'|%+.1f\\0A"' in kernel.ir()


@pytest.mark.parametrize("body, message", [
    ('T.print(f"{x:>5}")', "format spec '>5' cannot print a device f16"),
    ('T.print(f"{tid:.3s}")', "format spec '.3s' cannot print a device index"),
    ("T.print(X)", "T.print prints scalars and Python values, not a TileBuffer"),
    ('T.print("a", sep=1)', "sep and end must be Python strings"),
    ('s = f"{tid}" + "x"', "f-string with device values can only be printed"),
])
def test_print_errors_name_the_python_line(kernel_from, body, message):
    kernel = kernel_from(body)
    with pytest.raises(KernelError) as err:
        kernel.build()
    assert re.match(r".*printk0\.py:9: ", str(err.value))
    assert message in str(err.value)


@needs_ptxas
@pytest.mark.parametrize("chip", ["sm_80", "sm_90a", "sm_100a"])
def test_printing_kernels_assemble(chip):
    for line_info in (False, True):
        ptx = tilemlir.compile(_debug_kernels().show, target=chip, cache=False,
                               line_info=line_info).ptx
        assemble(ptx, chip)


# ---------------------------------------------------------------- line info

def _lines_of(ptx: str) -> list[tuple[tuple[str, int], str]]:
    """((source file, line), instruction) for each instruction of `ptx` that follows a `.loc`."""
    files = dict(re.findall(r'\.file\s+(\d+)\s+"([^"]+)"', ptx))
    out, where = [], None
    for text in ptx.splitlines():
        text = text.strip()
        m = re.match(r"\.loc\s+(\d+)\s+(\d+)\s+\d+", text)
        if m:
            where = (files[m.group(1)], int(m.group(2)))
        elif where is not None and text and not text.startswith(("//", "$", ".", "{", "}", "(",
                                                                  ")")):
            out.append((where, text))
    return out


def _source_lines(module, needle: str) -> set[tuple[str, int]]:
    """(file, line) of the lines of `module`'s source that contain `needle`."""
    path = Path(module.__file__).resolve()
    return {(str(path), i) for i, text in enumerate(path.read_text().splitlines(), 1)
            if needle in text}


def test_line_info_maps_the_demo_instructions_to_its_python_lines():
    ptx = tilemlir.compile(mma_demo.gemm_16x8x16, target="sm_80", cache=False,
                           line_info=True).ptx
    assert re.search(r'\.file\s+1 "([^"]*)"', ptx).group(1) == \
        str(Path(mma_demo.__file__).resolve())
    lines = _lines_of(ptx)
    mma = {where for where, text in lines if text.startswith("mma.sync")}
    loads = {where for where, text in lines if text.startswith("ld.global")}
    stores = {where for where, text in lines if text.startswith("st.global")}
    assert mma == _source_lines(mma_demo, "Tx.warp.gemm(")
    assert loads == _source_lines(mma_demo, "_reg[s] = A_g[") | \
        _source_lines(mma_demo, "_reg[s] = B_g[")
    assert stores == _source_lines(mma_demo, "D_g[lane // 4")
    assert ".target sm_80\n" in ptx                      # no ", debug": optimised by ptxas


def test_line_info_maps_hopper_gemm_instructions_to_their_python_lines():
    """hgemm_v6's wgmma and TMA instructions point at the lines that issue them: in the kernel
    or in the shared parts it is built from (macros carry their own file and line)."""
    from tilemlir.kernels import hgemm_hopper
    from tilemlir.kernels.parts import epilogue, mainloop
    ptx = tilemlir.compile(hgemm_v6(1000, 1000, 1000), target="sm_90a", cache=False,
                           line_info=True).ptx
    lines = _lines_of(ptx)
    wgmma = {where for where, text in lines if text.startswith("wgmma.mma_async")}
    tma = {where for where, text in lines if text.startswith("cp.async.bulk.tensor")}
    sources = (hgemm_hopper, mainloop, epilogue)
    assert wgmma and wgmma <= set().union(*(_source_lines(m, "gemm_async(") for m in sources))
    assert tma and tma <= set().union(*(_source_lines(m, "copy_async(") for m in sources))


def _strip_line_info(ptx: str) -> str:
    """`ptx` without what line info adds: the directives and the labels they need."""
    kept = [text for text in ptx.splitlines()
            if not re.match(r"\s*(\.loc|\.file)\s", text)
            and not re.match(r"\$L__(func_begin|func_end|tmp)\d+:$", text.strip())
            and text.strip() != ".section\t.debug_macinfo\t{\t}"]
    return "\n".join(kept)


@pytest.mark.parametrize("make, chip", [
    (lambda: mma_demo.gemm_16x8x16, "sm_80"),
    (lambda: hgemm_v6(1000, 1000, 1000), "sm_90a"),
    (lambda: _debug_kernels().show, "sm_100a"),
])
def test_line_info_adds_only_directives(make, chip):
    plain = tilemlir.compile(make(), target=chip, cache=False, line_info=False).ptx
    located = tilemlir.compile(make(), target=chip, cache=False, line_info=True).ptx
    assert not re.search(r"^\s*\.(loc|file)\s", plain, re.M)
    assert located.count(".loc") > 3
    assert _strip_line_info(located) == _strip_line_info(plain)


def elf_sections(image: bytes) -> set[str]:
    """The section names of a 64-bit little-endian ELF image (a cubin)."""
    assert image[:4] == b"\x7fELF" and image[4] == 2
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", image, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx][4]
    return {image[strtab + h[0]:image.index(b"\0", strtab + h[0])].decode() for h in headers}


@needs_ptxas
def test_ptxas_turns_line_info_into_a_line_table_and_the_same_code():
    kernel = hgemm_v6(1000, 1000, 1000)
    plain = assemble(tilemlir.compile(kernel, target="sm_90a", cache=False,
                                      line_info=False).ptx, "sm_90a")
    located = assemble(tilemlir.compile(kernel, target="sm_90a", cache=False,
                                        line_info=True).ptx, "sm_90a")
    assert "debug_line" not in " ".join(elf_sections(plain))
    assert {".debug_line", ".nv_debug_line_sass"} <= elf_sections(located)
    if find_cuda_tool("nvdisasm") is None:
        pytest.skip("nvdisasm not found: the SASS comparison needs it")
    assert disassemble(located) == disassemble(plain)


def test_line_info_is_on_by_default_and_part_of_the_cache_keys(isolated_cache, tmp_path):
    default = tilemlir.compile(mma_demo.gemm_16x8x16, target="sm_90a")
    assert ".loc" in default.ptx
    off = tilemlir.compile(mma_demo.gemm_16x8x16, target="sm_90a", line_info=False)
    assert ".loc" not in off.ptx and off is not default
    assert off.compile_info.key != default.compile_info.key
    assert not off.compile_info.cache_hit
    again = tilemlir.compile(mma_demo.gemm_16x8x16, target="sm_90a", line_info=True)
    assert again is default and again.compile_info.memory_hit


def test_with_line_info_the_key_follows_the_kernels_lines(isolated_cache, tmp_path,
                                                            monkeypatch):
    """The same kernel two lines further down: the same key without line info (the IR is the
    same), another with it (the PTX names other lines)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    source = Path(mma_demo.__file__).read_text()
    kernels = []
    for i, prefix in enumerate(("", "\n\n")):
        path = tmp_path / f"moved{i}.py"
        path.write_text(prefix + source)
        spec = importlib.util.spec_from_file_location(f"moved{i}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        kernels.append(module.gemm_16x8x16)
    keys = {li: [tilemlir.compile(k, target="sm_90a", line_info=li).compile_info.key
                 for k in kernels] for li in (False, True)}
    assert keys[False][0] == keys[False][1]
    assert keys[True][0] != keys[True][1]


@pytest.mark.parametrize("bad", [1, "yes", None])
def test_line_info_must_be_a_bool(bad):
    with pytest.raises(TypeError, match="line_info must be True or False"):
        tilemlir.compile(mma_demo.gemm_16x8x16, target="sm_90a", line_info=bad)

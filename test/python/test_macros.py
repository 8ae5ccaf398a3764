"""Device macros (`@T.macro`): module-level functions whose bodies are interpreted where a
kernel calls them, with device `if` / `T.serial` inside, their own globals, named arguments,
nesting, and their own file and line in diagnostics and in the PTX's `.loc`."""

import importlib.util
import re
from pathlib import Path

import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.lang import KernelError

ROOT = Path(__file__).resolve().parents[2]
SCALE = 100                     # not the macros' SCALE: they must read their own module's


def _parts():
    spec = importlib.util.spec_from_file_location("macro_parts",
                                                  ROOT / "test" / "Inputs" / "macro_parts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


parts = _parts()
PARTS_FILE = str(ROOT / "test" / "Inputs" / "macro_parts.py")


def _line(path: str, marker: str) -> int:
    for number, text in enumerate(Path(path).read_text().splitlines(), 1):
        if marker in text:
            return number
    raise AssertionError(marker)


def _kernel():
    @T.prim_func
    def k(out: T.Buffer((4,), "int32"), n: T.int32):
        tid = T.thread_id([32])
        total = parts.count_up(out, tid, n)
        out[1] = parts.add_twice(total, times=3, offset=1)
        out[2] = parts.add_twice(total)
    return k


def test_a_macro_branches_and_loops_on_device_values():
    text = str(_kernel().build())
    assert re.search(r"scf.for .* iter_args\(%\w+ = %\w+\) -> \(i32\)", text)
    assert "scf.if" in text
    # its own module's SCALE (3), not the caller's (100)
    assert "arith.constant 3 : i32" in text and "arith.constant 100" not in text


def test_a_macros_ops_carry_its_own_file_and_lines():
    text = _kernel().ir()
    loop_line = _line(PARTS_FILE, "marker-loop-body")
    store_line = _line(PARTS_FILE, "marker-store")
    assert re.search(rf'loc\("{re.escape(PARTS_FILE)}":{loop_line}:\d+\)', text)
    assert re.search(rf'loc\("{re.escape(PARTS_FILE)}":{store_line}:\d+\)', text)
    assert re.search(rf'loc\("{re.escape(__file__)}":\d+:\d+\)', text)


def test_the_ptx_loc_of_a_macro_points_at_the_macros_file_and_line():
    ptx = tilemlir.compile(_kernel(), target="sm_90a", cache=False, line_info=True).ptx
    files = dict(re.findall(r'\.file\s+(\d+)\s+"([^"]+)"', ptx))
    (parts_index,) = [i for i, f in files.items() if f.endswith("macro_parts.py")]
    store_line = _line(PARTS_FILE, "marker-store")
    loop_line = _line(PARTS_FILE, "marker-loop")       # LLVM folds the body into a formula
    locs = set(re.findall(r"\.loc\s+(\d+)\s+(\d+)\s+\d+", ptx))
    assert (parts_index, str(store_line)) in locs
    assert (parts_index, str(loop_line)) in locs
    assert any(f.endswith("test_macros.py") for f in files.values())


def test_macro_methods_take_the_instance_as_self():
    @T.prim_func
    def k(out: T.Buffer((8,), "int32")):
        tid = T.thread_id([32])
        counter = parts.Counter(out, 2)
        for i in T.serial(8):
            counter.bump(tid, i)
    text = str(k.build())
    assert "scf.for" in text and "scf.if" in text


def test_an_error_in_a_macro_names_its_line_and_the_call():
    @T.prim_func
    def k(out: T.Buffer((1,), "int32")):
        tid = T.thread_id([32])
        parts.fails(tid)                                # marker-call
    with pytest.raises(KernelError) as err:
        k.build()
    message = str(err.value)
    assert f"{PARTS_FILE}:{_line(PARTS_FILE, 'marker-fails')}:" in message
    assert "name 'undefined_name' is not defined" in message
    assert f"in fails(), called at {__file__}:{_line(__file__, 'marker-call')}" in message
    assert type(err.value) is KernelError                # a public class, not a private one


def test_return_inside_a_device_branch_is_refused():
    @T.prim_func
    def k(out: T.Buffer((1,), "int32")):
        tid = T.thread_id([32])
        out[0] = parts.returns_in_branch(tid)
    with pytest.raises(KernelError, match="return inside a device `if` or `for`"):
        k.build()


def test_recursion_and_bad_arguments_are_refused():
    @T.prim_func
    def rec(out: T.Buffer((1,), "int32")):
        T.thread_id([32])
        out[0] = parts.recurse(1)
    with pytest.raises(KernelError, match=r"recurse\(\) calls itself"):
        rec.build()

    @T.prim_func
    def bad(out: T.Buffer((1,), "int32")):
        T.thread_id([32])
        out[0] = parts.add_twice(1, 2)
    with pytest.raises(KernelError, match=r"add_twice\(\): too many positional arguments"):
        bad.build()


def test_a_macro_called_outside_a_kernel_says_so():
    with pytest.raises(KernelError, match="is a device macro"):
        parts.twice(1, 2)


def test_macro_takes_only_plain_functions():
    with pytest.raises(KernelError, match="plain `def`"):
        T.macro(print)


def test_a_kernel_function_passed_to_a_macro_runs_in_the_kernels_frame():
    """A hook defined in the kernel and called by a macro sees the kernel's names, and its
    ops carry the kernel's lines."""
    @T.prim_func
    def k(out: T.Buffer((8,), "int32")):
        tid = T.thread_id([32])
        base = 5

        def hook(i):
            out[i] = base + i                           # marker-hook

        for i in T.serial(8):
            _apply(hook, i)
    text = k.ir()
    assert re.search(rf'loc\("{re.escape(__file__)}":{_line(__file__, "marker-hook")}:', text)


@T.macro
def _apply(fn, i):
    fn(i)

"""The kernel language: control flow, buffers, and errors that name the kernel's source line."""

import re

import pytest
from mlir import ir

import tilemlir
import tilemlir.lang as T
from tilemlir.lang import KernelError, S, TileLayout, laneid

Tx = T.tile


def _line_of(fn, marker: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(fn.fn)
    return start + next(i for i, line in enumerate(lines) if marker in line)


def test_serial_loop_carries_reassigned_scalars():
    @T.prim_func
    def k(out: T.Buffer((4,), "int32")):
        T.thread_id([32])
        acc: T.int32 = 0
        phase: T.int32 = 0
        for i in T.serial(4):
            acc = acc + i
            phase ^= 1
        out[0] = acc + phase
    text = str(k.build())
    assert re.search(r"scf.for .* iter_args\(%\w+ = %\w+, %\w+ = %\w+\) -> \(i32, i32\)", text)
    assert "arith.xori" in text and text.count("scf.yield") == 1


def test_device_if_merges_scalars_assigned_in_a_branch():
    @T.prim_func
    def k(out: T.Buffer((1,), "int32")):
        tid = T.thread_id([32])
        x: T.int32 = 1
        if tid == 0:
            x = 7
        out[0] = x
    text = str(k.build())
    assert re.search(r"= scf.if %\w+ -> \(i32\)", text)


def test_python_conditions_and_unrolled_loops_fold_while_building():
    @T.prim_func
    def k(out: T.Buffer((8,), "float32")):
        T.thread_id([1])
        for s in T.unroll(8):
            if s % 2 == 0:
                out[s] = 1.0
    text = str(k.build())
    assert text.count("llvm.store") == 4 and "scf." not in text


def test_slices_with_dynamic_starts_keep_static_extents():
    @T.prim_func
    def k(A: T.Buffer((256, 256), "float16"), D: T.Buffer((256, 256), "float16")):
        bx = T.cta_id([2])
        T.thread_id([128])
        for i in T.serial(4):
            Tx.cta.copy(D[bx * 128:bx * 128 + 128, i * 64:(i + 1) * 64],
                        A[bx * 128:(bx + 1) * 128, i * 64:(i + 1) * 64])
    text = str(k.build())
    assert 'array<i64: 128, 64>, f16, "global", #tile.layout<"S[(128, 64):(256, 1)]">' in text


def _error(kernel) -> str:
    with pytest.raises(KernelError) as info:
        kernel.build()
    return str(info.value)


def test_an_undefined_name_is_reported_at_its_line():
    @T.prim_func
    def k(out: T.Buffer((1,), "int32")):
        T.thread_id([32])
        out[0] = undefined_thing + 1  # marker-undefined
    message = _error(k)
    assert message.startswith(f"{__file__}:{_line_of(k, 'marker-undefined')}:")
    assert "name 'undefined_thing' is not defined" in message


def test_a_device_value_used_as_a_python_bool_is_explained():
    @T.prim_func
    def k(out: T.Buffer((1,), "int32")):
        tid = T.thread_id([32])
        flag = tid == 0
        out[0] = 1 if bool(flag) else 0  # marker-bool
    message = _error(k)
    assert f":{_line_of(k, 'marker-bool')}:" in message and "no Python truth value" in message


def test_while_loops_and_bad_dtypes_are_rejected_with_their_line():
    @T.prim_func
    def k(out: T.Buffer((1,), "int32")):
        T.thread_id([32])
        regs = T.alloc_local((4,), "float24")  # marker-dtype
    message = _error(k)
    assert f":{_line_of(k, 'marker-dtype')}:" in message and "unknown dtype 'float24'" in message


def test_a_slice_out_of_bounds_names_the_dimension():
    @T.prim_func
    def k(A: T.Buffer((64, 64), "float16"), D: T.Buffer((64, 64), "float16")):
        T.thread_id([128])
        Tx.cta.copy(D[:, :], A[64:128, 0:64])  # marker-oob
    message = _error(k)
    assert f":{_line_of(k, 'marker-oob')}:" in message and "out of dim 0 (size 64)" in message


def test_a_global_window_past_the_edge_is_refused_to_an_unmasked_copy():
    """A window of a global buffer may hang past its edge (for masked copies and TMA); an
    unmasked copy of one is refused at its line, naming the dim."""
    @T.prim_func
    def k(A: T.Buffer((64, 64), "float16"), D: T.Buffer((64, 64), "float16")):
        T.thread_id([128])
        Tx.cta.copy(D[:, :], A[0:64, 32:96])  # marker-oob
    with pytest.raises(ir.MLIRError) as info:
        tilemlir.compile(k, target="sm_90a", cache=False)
    message = str(info.value)
    assert f":{_line_of(k, 'marker-oob')}:" in message
    assert "SRC hangs past its global buffer's edge ([32, 96) of dim 1, whose extent is 64)" \
        in message


def test_layout_misuse_is_a_clear_error():
    frag = TileLayout(S[(2, 8, 4, 2):(2, 4 @ laneid, 1 @ laneid, 1)])

    @T.prim_func
    def wrong_size(out: T.Buffer((1,), "int32")):
        T.lane_id([32])
        d = T.alloc_local((16, 16), "float32", layout=frag)  # marker-size
    message = _error(wrong_size)
    assert f":{_line_of(wrong_size, 'marker-size')}:" in message and "128 elements" in message

    @T.prim_func
    def distributed_element(out: T.Buffer((1,), "float32")):
        T.lane_id([32])
        d = T.alloc_local((16, 8), "float32", layout=frag)
        out[0] = d[3, 5]  # marker-elem
    message = _error(distributed_element)
    assert "spread over threads" in message and ".local(n)" in message

    @T.prim_func
    def dynamic_thread_slice(out: T.Buffer((1,), "float32")):
        lane = T.lane_id([32])
        d = T.alloc_local((16, 8), "float32", layout=frag)
        part = d[lane:lane + 8, :]  # marker-dyn
    message = _error(dynamic_thread_slice)
    assert "spread over threads" in message and "static offsets" in message


def test_undeclared_threads_are_reported():
    @T.prim_func
    def k(out: T.Buffer((1,), "int32")):
        out[0] = 1
    assert "declares no threads" in _error(k)


def test_ops_carry_the_python_source_location():
    @T.prim_func
    def k(out: T.Buffer((2,), "int32")):
        T.thread_id([32])
        out[1] = 5  # marker-loc
    text = k.ir()
    assert f'loc("{__file__}":{_line_of(k, "marker-loc")}:' in text


def test_functions_defined_in_a_kernel_are_inlined_where_called():
    @T.prim_func
    def k(out: T.Buffer((4,), "int32")):
        tid = T.thread_id([32])

        def twice(x, extra=0):
            y = x * 2
            return y + extra

        out[0] = twice(tid)
        out[1] = twice(tid, 1)
    text = str(k.build())
    assert text.count("arith.muli") == 2 and text.count("llvm.store") == 2


def test_a_return_outside_a_function_is_rejected():
    @T.prim_func
    def k(out: T.Buffer((1,), "int32")):
        T.thread_id([32])
        return  # marker-return
    assert "return is not supported in a kernel body" in _error(k)

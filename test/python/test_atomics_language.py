"""Global atomics (T.ptx.atom_add), a named barrier that hands one thread's decision to every
thread taking part (T.cuda.bar_or), and kernel parameters only some configurations of a factory
have (annotated None): built, lowered, assembled, and misuse reported at its line."""

import re

import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.analysis.values import ValueAnalysis
from tilemlir.lang import KernelError


def _line_of(fn, marker: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(fn.fn)
    return start + next(i for i, line in enumerate(lines) if marker in line)


def test_atom_add_and_bar_or_build_their_ops():
    @T.prim_func
    def k(C: T.Buffer((8,), "int32"), out: T.Buffer((256,), "int32")):
        tid = T.thread_id([256])
        wg = tid // 128
        last: T.boolean = False
        if tid % 128 == 0:
            last = T.ptx.atom_add(C.ptr_to([wg]), 1, sem="acq_rel", scope="gpu") == 1
        if T.cuda.bar_or(wg, 128, last):
            out[tid] = 1
    text = str(k.build())
    assert re.search(r'"tile.atomic_add"\(.*\) \{mem_scope = "gpu", sem = "acq_rel"\}', text)
    assert re.search(r'"tile.barrier_or"\(.*\) \{threads = 128 : i64\}', text)
    ptx = tilemlir.compile(k, target="sm_90a", cache=False).ptx
    assert re.search(r"fence\.acq_rel\.gpu;\s+atom\.global\.add\.u32\s+%r\d+, \[%rd\d+\], 1;\s+"
                     r"fence\.acq_rel\.gpu;", ptx)
    assert re.search(r"bar\.red\.or\.pred\s+%p\d+, %r\d+, 128, %p\d+;", ptx)


@pytest.mark.parametrize("call, message", [
    ("sem", "atom_add sem must be one of relaxed, acquire, release, acq_rel, got 'seq_cst'"),
    ("scope", "atom_add scope must be one of cta, cluster, gpu, sys, got 'device'"),
    ("threads", "bar_or threads must be a positive multiple of 32 (whole warps), got 128.0"),
])
def test_atomic_and_barrier_misuse_names_the_line(call, message):
    @T.prim_func
    def k(C: T.Buffer((8,), "int32")):
        tid = T.thread_id([128])
        if call == "sem":
            T.ptx.atom_add(C.ptr_to([0]), 1, sem="seq_cst")          # sem
        if call == "scope":
            T.ptx.atom_add(C.ptr_to([0]), 1, scope="device")         # scope
        if call == "threads":
            T.cuda.bar_or(1, 128.0, tid == 0)                         # threads
    with pytest.raises(KernelError) as info:
        k.build()
    assert message in str(info.value)
    assert f":{_line_of(k, '# ' + call)}:" in str(info.value)


def test_a_parameter_annotated_none_is_no_kernel_parameter():
    def factory(with_w: bool):
        @T.prim_func
        def k(A: T.Buffer((4,), "int32"), W: T.Buffer((4,), "float32") if with_w else None,
              B: T.Buffer((4,), "int32")):
            T.thread_id([32])
            if W is None:
                B[0] = A[0]
            else:
                B[0] = A[0] + 1
                W[0] = 1.0
        return k
    without = tilemlir.compile(factory(False), target="sm_90a", cache=False)
    assert [p.name for p in without.signature.params] == ["A", "B"]
    with_w = tilemlir.compile(factory(True), target="sm_90a", cache=False)
    assert [p.name for p in with_w.signature.params] == ["A", "W", "B"]
    assert [p.dtype for p in with_w.signature.params] == ["i32", "f32", "i32"]


def test_bar_or_is_uniform_over_the_threads_of_its_barrier():
    """The value analysis: a barrier whose id is the warpgroup index and whose count is 128
    gives the same answer to each warpgroup (so a warpgroup-wide copy may sit under it); a
    barrier id shared by threads of several groups only to a warp."""
    @T.prim_func
    def k(out: T.Buffer((384,), "int32")):
        tid = T.thread_id([384])
        wg = tid // 128
        a = T.cuda.bar_or(wg, 128, tid == 5)
        b = T.cuda.bar_or(1, 128, tid == 5)
        c = T.cuda.bar_or(wg, 64, tid == 5)
        out[tid] = 0
    module = k.build()
    ops = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    if o.name == "tile.barrier_or":
                        ops.append(o)
                    walk(o)
    walk(module.operation)
    analysis = ValueAnalysis((384, 1, 1))
    assert [analysis.granularity(o.result) for o in ops] == [128, 32, 32]

"""The Python API surface: targets, options and sources are checked in Python, before C++ sees
them, with typed errors that name the argument. Compiles run in child processes."""

import inspect

import mlir.dialects.nvgpu as nvgpu_dialect
import mlir.dialects.nvvm as nvvm_dialect
import pytest

from harness import PyCase
from tilemlir.pipeline import PipelineError, check_opt_level
from tilemlir.target import Target, TargetError
from tilemlir.target.chips import KNOWN_PTX, NVVM_REQUIREMENTS, nvvm_requirement
from tilemlir.ir.source import MAX_NESTING, SourceError, check_nesting, decode
from tilemlir.tools.pass_pipeline import parse_pipeline

NVVM_OPS = sorted({cls.OPERATION_NAME for dialect in (nvvm_dialect, nvgpu_dialect)
                   for _, cls in inspect.getmembers(dialect, inspect.isclass)
                   if hasattr(cls, "OPERATION_NAME")})


def test_every_nvvm_and_nvgpu_op_of_the_bindings_has_a_requirement():
    """The target check is complete by construction: an nvvm or nvgpu op the installed bindings
    define but the table lacks fails here (and tile-check-target rejects it rather than guess)."""
    assert len(NVVM_OPS) > 200
    missing = [name for name in NVVM_OPS if nvvm_requirement(name) is None]
    assert not missing, f"add these nvvm ops to NVVM_REQUIREMENTS in target/chips.py: {missing}"


def test_every_table_entry_names_an_existing_op_family():
    stale = [p for p in NVVM_REQUIREMENTS if not any(n == p or n.startswith(p + ".") for n in NVVM_OPS)]
    assert not stale, stale


@pytest.mark.parametrize("op,chip,ok", [
    ("nvvm.st.bulk", "sm_80", False), ("nvvm.st.bulk", "sm_100a", True),
    ("nvvm.fence.sc.cluster", "sm_80", False), ("nvvm.fence.sc.cluster", "sm_90a", True),
    ("nvvm.mbarrier.expect_tx", "sm_80", False), ("nvvm.mbarrier.expect_tx", "sm_90a", True),
    ("nvvm.mbarrier.init", "sm_80", True), ("nvvm.mbarrier.init", "sm_75", False),
    ("nvvm.wgmma.mma_async", "sm_100a", False), ("nvvm.wgmma.mma_async", "sm_90", False),
    ("nvvm.tcgen05.mma", "sm_90a", False), ("nvvm.tcgen05.mma", "sm_100a", True),
    ("nvvm.barrier0", "sm_75", True), ("nvvm.read.ptx.sreg.tid.x", "sm_75", True),
    ("nvvm.read.ptx.sreg.cluster.ctarank", "sm_80", False),
    ("nvvm.fence.proxy.acquire", "sm_90a", False),        # needs PTX 8.3, sm_90a's floor is 8.0
    ("nvgpu.warpgroup.mma", "sm_80", False), ("nvgpu.warpgroup.mma", "sm_90a", True),
    ("nvgpu.device_async_copy", "sm_75", False), ("nvgpu.tma.async.load", "sm_80", False),
    ("nvgpu.mbarrier.create", "sm_75", True),
])
def test_requirements_per_chip(op, chip, ok):
    assert Target(chip).supports(nvvm_requirement(op)) is ok


def test_a_newer_ptx_unlocks_a_ptx_gated_op():
    assert Target("sm_90a", 83).supports(nvvm_requirement("nvvm.fence.proxy.acquire"))


@pytest.mark.parametrize("chip,ptx,words", [
    (90, None, "a target is a chip name such as 'sm_90a', got 90 (int)"),
    (None, None, "got None"),
    ("sm_42", None, "unsupported chip 'sm_42'"),
    ("SM_90A", None, "unknown chip 'SM_90A'"),
    ("sm_90b", None, "unknown chip"),
    ("sm_80a", None, "the arch-specific ('a') chips are"),
    ("sm_75a", None, "unknown chip 'sm_75a'"),
    ("sm_90a", 999, "unknown PTX ISA version 999"),
    ("sm_90a", 0, "unknown PTX ISA version 0"),
    ("sm_90a", 79, "unknown PTX ISA version 79"),
    ("sm_90a", 78, "sm_90a needs PTX ISA 8.0 or newer, got 7.8"),
    ("sm_100a", 80, "sm_100a needs PTX ISA 8.6"),
    ("sm_80", 70, "sm_80 needs PTX ISA 7.8"),
    ("sm_80", "78", "the PTX version is an integer"),
    ("sm_80", 7.8, "the PTX version is an integer"),
    ("sm_80", True, "the PTX version is an integer"),
])
def test_bad_targets(chip, ptx, words):
    with pytest.raises(TargetError, match=None) as err:
        Target(chip, ptx)
    assert words in str(err.value)


@pytest.mark.parametrize("ptx", KNOWN_PTX[KNOWN_PTX.index(80):])
def test_every_known_ptx_at_or_above_the_floor_is_accepted(ptx):
    assert Target("sm_90a", ptx).features == f"+ptx{ptx}"


@pytest.mark.parametrize("value", [-1, 4, 99, "99", "x", "", 1.5, True, None, "2 "])
def test_bad_opt_levels(value):
    if value == "2 ":
        assert check_opt_level(value) == 2
        return
    with pytest.raises(PipelineError, match="opt_level must be 0, 1, 2 or 3"):
        check_opt_level(value)


@pytest.mark.parametrize("text,words", [
    ("builtin.module(tile-to-ptx{opt-level=9})", "opt-level of tile-to-ptx must be"),
    ("builtin.module(tile-dispatch{chip=sm_90a ptx=999})", "unknown PTX ISA version 999"),
    ("builtin.module(gpu-lower-to-nvvm-pipeline{cubin-chip=sm_80})", "uses PTX 6.0"),
    ("builtin.module(tile-dispatch{chip=sm_80},tile-dispatch{chip})", "needs a value"),
])
def test_bad_pipelines(text, words):
    with pytest.raises(PipelineError) as err:
        parse_pipeline(text)
    assert words in str(err.value)


def test_upstream_nvvm_pipeline_is_checked_for_its_chip_first():
    steps = parse_pipeline("builtin.module(gpu-lower-to-nvvm-pipeline{cubin-chip=sm_80 "
                           "cubin-features=+ptx78})")
    assert [kind for kind, _ in steps] == ["py", "mlir"]
    assert steps[0][1].__name__ == "tile_check_target"


@pytest.mark.parametrize("data,words", [
    (b"ML\xefR\x00", "MLIR bytecode"), (b"a\x00b", "NUL byte at offset 1"),
    (b"\xc3\x28", "not UTF-8 text (byte 0xc3 at offset 0)"), (b"\xff", "byte 0xff"),
])
def test_undecodable_sources(data, words):
    with pytest.raises(SourceError) as err:
        decode(data, "k.mlir")
    assert str(err.value).startswith("k.mlir: ") and words in str(err.value)


@pytest.mark.parametrize("text,deep", [
    ("(" * MAX_NESTING + ")" * MAX_NESTING, False),
    ("(" * (MAX_NESTING + 1), True),
    ("<" * 300, True),
    ("affine_set<(d0) : (" + "d0 >= 0, " * 400 + ")>" + "{" * 300, True),
    ("(d0) -> (d0)" * 1000, False),
    ('"' + "{" * 1000 + '"', False),
    ("// " + "[" * 1000 + "\n", False),
])
def test_nesting_guard(text, deep):
    if deep:
        with pytest.raises(SourceError, match="nesting deeper than"):
            check_nesting(text, "k.mlir")
    else:
        check_nesting(text, "k.mlir")


KERNEL = "from tilemlir.kernels.mma_demo import gemm_16x8x16 as k\n"
CASES = [
    *[PyCase(f"compile-opt-level-{i}", KERNEL + f"tilemlir.compile(k, target='sm_80', opt_level={v!r}, cache=False)",
             "PipelineError", ("opt_level must be 0, 1, 2 or 3",))
      for i, v in enumerate([99, -1, 4, "fast", 1.5])],
    PyCase("compile-target-int", KERNEL + "tilemlir.compile(k, target=90, cache=False)",
           "TargetError", ("got 90 (int)",)),
    PyCase("compile-target-unknown", KERNEL + "tilemlir.compile(k, target='sm_42', cache=False)",
           "TargetError", ("unsupported chip 'sm_42'",)),
    PyCase("compile-target-ptx-999", KERNEL + "from tilemlir.target import Target\n"
           "tilemlir.compile(k, target=Target('sm_90a', 999), cache=False)",
           "TargetError", ("unknown PTX ISA version 999",)),
    PyCase("compile-opt-level-0-works", KERNEL + "tilemlir.compile(k, target='sm_80', opt_level=0, cache=False)", None),
]


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_api_case(batch, case_id):
    batch.check(case_id)

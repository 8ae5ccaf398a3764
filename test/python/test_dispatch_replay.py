"""tile-dispatch on big, repetitive kernels: ops of one signature are decided once and their
replacement replayed (tilemlir/dispatch/memo.py). Replaying must build exactly the IR, with the
same locations, and the same diagnostics as dispatching every op on its own; and dispatch plus
materialize must stay linear in the number of ops."""

from __future__ import annotations

import importlib.util
import re
import time
from pathlib import Path

import pytest
from mlir import ir

from tilemlir.dispatch import dispatcher, memo
from tilemlir.ir.context import make_context
from tilemlir.lowering.cuda import load_variants
from tilemlir.lowering.materialize import run_materialize
from tilemlir.target import DEFAULT_CHIP, Target

load_variants()

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("dispatch_speed",
                                                  ROOT / "bench" / "dispatch_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()


def dispatched(text: str, chip: str, replay: bool, materialize: bool = False):
    """(IR with locations, [(location, message)]) after tile-dispatch (and tile-materialize)."""
    with make_context():
        module = ir.Module.parse(text)
        failures = []
        for op in module.body.operations:
            if op.operation.name == "gpu.module":
                failures += dispatcher.run_dispatch(op.operation, Target(chip),
                                                    replay=replay)
                if materialize and not failures:
                    failures += run_materialize(op.operation)
        return (module.operation.get_asm(enable_debug_info=True),
                [(str(loc), message) for loc, message in failures])


def test_replayed_ir_is_the_ir_of_each_op_on_its_own(monkeypatch):
    # every step its own fragments and windows, every fourth under its own scf.if
    text = BENCH.mixed_text(6 * 24)
    replays = []
    instantiate = memo.Template.instantiate
    monkeypatch.setattr(memo.Template, "instantiate",
                        lambda self, op, leaves: replays.append(op) or instantiate(self, op, leaves))
    replayed, failures = dispatched(text, "sm_80", replay=True)
    # 6 ops x 2 places (under a branch or not) are dispatched; the other 132 ops are replayed
    assert len(replays) == 6 * 24 - 12
    alone, _ = dispatched(text, "sm_80", replay=False)
    assert len(replays) == 6 * 24 - 12
    assert failures == []
    assert replayed == alone
    assert "tile.copy" not in replayed and replayed.count("nvvm.mma.sync") == 24
    # each op's replacement carries that op's line
    assert len(set(re.findall(r'loc\("[^"]*":(\d+):', replayed))) > 100


def test_replay_matches_with_materialize_too():
    text = BENCH.casts_text(50)
    assert dispatched(text, "sm_80", True, materialize=True) == \
        dispatched(text, "sm_80", False, materialize=True)


FAILING = """
!D32 = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
!D16 = !tile.buf<array<i64: 16, 8>, f16, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c0 = arith.constant 0 : index
    %tid = gpu.thread_id x
    %half = arith.divui %tid, %c16 : index
    %warp = arith.divui %tid, %c32 : index
    %a = arith.cmpi eq, %half, %c0 : index
    %w = arith.cmpi eq, %warp, %c0 : index
    %s = "tile.alloc_local"() : () -> !D32
    %d = "tile.alloc_local"() : () -> !D16
    scf.if %a {
      "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()
      "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()
    }
    scf.if %a {
      "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()
    }
    scf.if %w {
      "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()
      "tile.cast"(%d, %s) {scope = "warp"} : (!D16, !D32) -> ()
    }
    gpu.return
  }
}
"""


def test_each_rejected_op_gets_its_own_diagnostic():
    """Casts under a half-warp branch are rejected, each with the location of its own op and
    its own branch; those under a warp-uniform branch are lowered (and replayed)."""
    replayed, failures = dispatched(FAILING, "sm_80", replay=True)
    alone, expected = dispatched(FAILING, "sm_80", replay=False)
    assert failures == expected and replayed == alone
    assert [loc for loc, _ in failures] == ['loc("-":17:7)', 'loc("-":18:7)', 'loc("-":21:7)']
    assert [re.search(r'branch at loc\("-":(\d+)', m).group(1) for _, m in failures] == \
        ["16", "16", "20"]
    assert all("no variant of 'tile.cast'" in m and "scope_reaches" in m for _, m in failures)
    assert replayed.count("nvvm.convert.f32x2.to.f16x2") == 4


def test_tma_copies_that_add_kernel_parameters_are_not_replayed():
    """A TMA load reads a tensor-map parameter of the kernel, which is not among its operands:
    repeated, it must still come out as dispatching each op on its own does."""
    text = (ROOT / "test" / "Dispatch" / "copy-async-tma.mlir").read_text().split("// -----")[0]
    line = next(ln for ln in text.splitlines() if '"tile.copy_async"' in ln)
    text = text.replace(line, "\n".join([line] * 4))
    replayed, failures = dispatched(text, "sm_90a", replay=True)
    alone, _ = dispatched(text, "sm_90a", replay=False)
    assert failures == [] and replayed == alone
    assert replayed.count("nvvm.cp.async.bulk.tensor.shared.cluster.global") == 4


def _seconds(text: str) -> float:
    """The best of three runs of tile-dispatch + tile-materialize on `text`, in CPU time of this
    process (other processes on a loaded machine do not count)."""
    best = float("inf")
    for _ in range(3):
        with make_context():
            module = ir.Module.parse(text)
            gpu_module = next(op.operation for op in module.body.operations
                              if op.operation.name == "gpu.module")
            began = time.process_time()
            assert dispatcher.run_dispatch(gpu_module, Target("sm_80")) == []
            assert run_materialize(gpu_module) == []
            best = min(best, time.process_time() - began)
    return best


@pytest.mark.parametrize("workload", ["casts", "mixed"])
def test_dispatch_and_materialize_stay_linear(workload):
    """4x the ops may take at most ~6x the time (linear is 4x; a pass that rescans the kernel
    per op, as tile-materialize once did for every register buffer, takes ~16x). The sizes are
    large enough that fixed costs do not dominate, small enough for a loaded CI machine."""
    text = BENCH.WORKLOADS[workload][0]
    small, large = _seconds(text(600)), _seconds(text(2400))
    assert large / small < 6.5, f"{workload}: 600 ops {small:.3f} s, 2400 ops {large:.3f} s"


DISPATCH_TESTS = sorted((ROOT / "test" / "Dispatch").glob("*.mlir"))


@pytest.mark.parametrize("path", DISPATCH_TESTS, ids=[p.stem for p in DISPATCH_TESTS])
def test_lit_inputs_with_every_primitive_repeated(path):
    """Every one-line primitive of the Dispatch lit inputs three times over (so the second and
    third copies are replayed): the same IR, locations and diagnostics as without replaying,
    for every variant the tests reach (guards under scf.if, TMA maps, rejections ...)."""
    text = path.read_text()
    named = re.search(r"tile-dispatch\{chip=(\w+)", text)
    chip = named.group(1) if named else DEFAULT_CHIP
    replayed_any = False
    for chunk in text.split("// -----"):
        lines, statement = [], []
        for line in chunk.splitlines():
            if statement or re.match(r'\s*"tile\.\w+"\(', line):
                statement.append(line)        # a primitive without results, maybe multi-line
                if re.search(r"->\s*\(\)\s*$", line):
                    lines += statement * 3
                    statement = []
                    replayed_any = True
            else:
                lines.append(line)
        repeated = "\n".join(lines + statement)
        try:
            with make_context():
                ir.Module.parse(repeated)
        except ir.MLIRError:
            continue                  # an input the parser rejects on purpose
        assert dispatched(repeated, chip, replay=True) == \
            dispatched(repeated, chip, replay=False)
    assert replayed_any

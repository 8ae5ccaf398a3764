"""The value analysis (tilemlir/analysis): each fact of a few index expressions, and the
single-issuer proof built on per-thread values."""

import pytest
from mlir import ir

from tilemlir.analysis.threads import analysis_of, single_issuer_reason, thread_dependent_branches
from tilemlir.analysis.values import UNIFORM
from tilemlir.ir.context import make_context

KERNEL = '''
gpu.module @m {
  gpu.func @k(%n: index) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c32 = arith.constant 32 : index
    %c5 = arith.constant 5 : index
    %tid = gpu.thread_id x
    %lane = arith.remui %tid, %c32 : index
    %warp = arith.divui %tid, %c32 : index
    %shifted = arith.shrui %tid, %c5 : index
    %bid = gpu.block_id x
    %row = arith.muli %bid, %c16 : index
    %off = arith.addi %row, %c32 : index
    %mixed = arith.addi %row, %n : index
    %is_w0 = arith.cmpi eq, %warp, %c0 : index
    %first = arith.cmpi ult, %tid, %c4 : index
    %least = arith.minsi %row, %off : index
    %most = arith.maxsi %row, %n : index
    scf.for %i = %c16 to %n step %c32 {
      "test.use"(%i) : (index) -> ()
    }
    scf.if %is_w0 {
      %e = "tile.elect_sync"() : () -> i1
      scf.if %e {
        "test.one"() : () -> ()
      }
      "test.warp"() : () -> ()
    }
    scf.if %first {
      "test.four"() : () -> ()
    }
    gpu.return
  }
}'''


@pytest.fixture
def kernel():
    with make_context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(KERNEL)
        func = module.body.operations[0].regions[0].blocks[0].operations[0]
        ops = {}

        def walk(op):
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        ops.setdefault(inner.name, []).append(inner.operation)
                        walk(inner)
        walk(func)
        values = {}
        entry = func.regions[0].blocks[0]
        names = ["c0", "c4", "c16", "c32", "c5", "tid", "lane", "warp", "shifted", "bid", "row",
                 "off", "mixed", "is_w0", "first", "least", "most"]
        for name, op in zip(names, entry.operations):
            values[name] = op.result
        values["n"] = entry.arguments[0]
        values["i"] = ops["scf.for"][0].regions[0].blocks[0].arguments[0]
        yield func, ops, values


def test_granularity(kernel):
    func, ops, v = kernel
    a = analysis_of(ops["test.use"][0])
    assert a.granularity(v["c16"]) == UNIFORM and a.granularity(v["bid"]) == UNIFORM
    assert a.granularity(v["tid"]) == 1 and a.granularity(v["lane"]) == 1
    assert a.granularity(v["warp"]) == 32 and a.granularity(v["shifted"]) == 32
    assert a.granularity(v["is_w0"]) == 32 and a.granularity(v["mixed"]) == UNIFORM
    assert a.granularity(v["i"]) == UNIFORM


PERIODS = '''
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %tid = gpu.thread_id x
    %lane = gpu.lane_id
    %c3 = arith.constant 3 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c31 = arith.constant 31 : index
    %c40 = arith.constant 40 : index
    %c48 = arith.constant 48 : index
    %c48m = arith.constant 48 : index
    %r48 = arith.remui %tid, %c48 : index
    %r40 = arith.remui %tid, %c40 : index
    %low = arith.andi %tid, %c31 : index
    %high = arith.andi %tid, %c48m : index
    %a = arith.divui %r48, %c16 : index
    %b = arith.divui %r40, %c16 : index
    %c = arith.divui %low, %c8 : index
    %d = arith.divui %high, %c16 : index
    %e = arith.divui %lane, %c3 : index
    %f = arith.divui %tid, %c3 : index
    "test.use"(%a, %b, %c, %d, %e, %f) : (index, index, index, index, index, index) -> ()
    gpu.return
  }
}'''


def test_a_divided_thread_index_is_coarse_only_where_its_groups_do_not_wrap():
    with make_context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(PERIODS)
        func = module.body.operations[0].regions[0].blocks[0].operations[0]
        use = list(func.regions[0].blocks[0].operations)[-2].operation
        a = analysis_of(use)
        # (tid % 48) / 16 keeps groups of 16; (tid % 40) / 16 and lane / 3 wrap inside a group;
        # a mask of low bits is a modulo; another mask is taken to vary per thread
        assert [a.granularity(v) for v in use.operands] == [16, 1, 8, 1, 1, 3]
        values = a.values(use.operands[1])
        assert (values[32:48] != values[32]).any()


def test_known_multiple(kernel):
    func, ops, v = kernel
    a = analysis_of(ops["test.use"][0])
    assert a.multiple(v["row"]) == 16 and a.multiple(v["off"]) == 16
    assert a.multiple(v["mixed"]) == 1 and a.multiple(v["c0"]) == 0
    assert a.multiple(v["i"]) == 16
    # min and max are one operand or the other (a CTA's last part of a row: min(part, N - c0))
    assert a.multiple(v["least"]) == 16 and a.multiple(v["most"]) == 1


CARRIED = '''
gpu.module @m {
  gpu.func @k(%n: index, %b: i1) kernel attributes {known_block_size = array<i32: 128, 1, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c6 = arith.constant 6 : index
    %c256 = arith.constant 256 : index
    %c96 = arith.constant 96 : index
    %bid = gpu.block_id x
    %tile = arith.muli %bid, %c256 : index
    %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%last = %c0, %grow = %c96, %mix = %c96)
        -> (index, index, index) {
      "test.use"(%last, %grow, %mix) : (index, index, index) -> ()
      %next = arith.addi %grow, %c256 : index
      %other = arith.addi %mix, %c6 : index
      scf.yield %tile, %next, %other : index, index, index
    }
    %sel = scf.if %b -> (index) {
      scf.yield %tile : index
    } else {
      scf.yield %c96 : index
    }
    "test.after"(%r#0, %r#1, %r#2, %sel) : (index, index, index, index) -> ()
    gpu.return
  }
}'''


def test_multiples_carried_through_loops_and_branches():
    """A loop-carried value is a multiple of what its initial value and every yield are, also
    where the yield reads it; a loop's and a branch's results likewise."""
    with make_context() as ctx:
        ctx.allow_unregistered_dialects = True
        module = ir.Module.parse(CARRIED)
        func = module.body.operations[0].regions[0].blocks[0].operations[0]
        ops = list(func.regions[0].blocks[0].operations)
        loop = next(op for op in ops if op.name == "scf.for")
        use = list(loop.regions[0].blocks[0].operations)[0].operation
        after = next(op for op in ops if op.name == "test.after").operation
        a = analysis_of(use)
        # tile (256) or 0; 96 + 256 k; 96 + 6 k
        assert [a.multiple(v) for v in use.operands] == [256, 32, 6]
        b = analysis_of(after)
        assert [b.multiple(v) for v in after.operands] == [256, 32, 6, 32]


def test_per_thread_values(kernel):
    func, ops, v = kernel
    a = analysis_of(ops["test.use"][0])
    assert a.values(v["warp"]).tolist() == [t // 32 for t in range(128)]
    assert a.values(v["first"]).sum() == 4
    assert a.values(v["bid"]) is None and a.values(v["mixed"]) is None


def test_reaching_threads(kernel):
    func, ops, v = kernel
    assert single_issuer_reason(ops["test.one"][0]) is None
    assert single_issuer_reason(ops["test.warp"][0], "a TMA copy").startswith(
        "up to 32 threads of the 128-thread block reach the op, but a TMA copy is issued by one")
    assert "up to 4 threads" in single_issuer_reason(ops["test.four"][0])
    assert [b.granularity for b in thread_dependent_branches(ops["test.one"][0])] == [1, 32]

"""hgemm_blackwell.py's steps compile to sm_100a PTX (and pass the proxy-fence check, which
tile-to-ptx runs first), and each factory rejects configurations it cannot build with a
message naming the parameter. No Blackwell GPU here: nothing runs (test/Target/
hgemm-blackwell-ptx.mlir checks the PTX and assembles it with ptxas)."""

import pytest

import tilemlir
import tilemlir.lang as T
from tilemlir.kernels import hgemm_blackwell as bw
from tilemlir.kernels.hgemm_blackwell import ShapeError
from tilemlir.runtime.signature import kernels

FACTORIES = [bw.hgemm_v4, bw.hgemm_v5, bw.hgemm_v6, bw.hgemm_v7]


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape,kwargs", [
    ((256, 512, 1000), {}),                                        # ragged K: TMA zero-fills
    ((256, 256, 512), dict(dtype="bfloat16", BN=128, STAGES=6, EPI_N=32)),
], ids=["f16-256x512x1000", "bf16-BN128"])
def test_compiles_for_sm100a(factory, shape, kwargs):
    ptx = tilemlir.compile(factory(*shape, **kwargs), target="sm_100a", cache=False).ptx
    assert ".target sm_100a" in ptx
    assert "cp.async.bulk.tensor.2d" in ptx
    group = 2 if factory is bw.hgemm_v7 else 1
    assert f"tcgen05.mma.cta_group::{group}.kind::f16" in ptx
    assert f"tcgen05.mma.cta_group::{3 - group}" not in ptx     # one cta_group per kernel
    assert "tcgen05.fence::after_thread_sync" in ptx


@pytest.mark.parametrize("factory,columns", [(bw.hgemm_v5, 128), (bw.hgemm_v6, 256)],
                         ids=["v5-one", "v6-two"])
def test_tmem_holds_one_or_two_accumulators(factory, columns):
    # line_info=False: the two instructions are adjacent only without .loc lines between them
    ptx = tilemlir.compile(factory(4096, 4096, 256, BN=128), target="sm_100a", cache=False,
                           line_info=False).ptx
    assert f", {columns};\n\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32" in ptx


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("args,kwargs,message", [
    ((256, 256, 256), dict(dtype="float32"), "dtype must be one of ('float16', 'bfloat16')"),
    ((256, 256, 256), dict(BM=64), "BM=64 must be 128"),
    ((256, 256, 256), dict(BN=200), "BN=200 must be a multiple of 16 up to 256"),
    ((256, 256, 256), dict(BK=32), "BK must be 64"),
    ((256, 256, 256), dict(STAGES=1), "STAGES=1 must be at least 2"),
    ((256, 256, 256), dict(STAGES=5), "5 stages of 49152 bytes exceed the 227 KiB"),
    ((256, 256, 256), dict(EPI_N=48), "EPI_N=48 must be 16, 32, 64 or 128 and divide BN=256"),
    ((200, 256, 256), {}, "M=200 is not a multiple of the tile's M extent 128"),
    ((256, 384, 256), {}, "N=384 is not a multiple of the tile's N extent 256"),
    ((256, 256, 260), {}, "K=260 must be a multiple of 8"),
])
def test_rejects_bad_configurations(factory, args, kwargs, message):
    with pytest.raises(ShapeError) as info:
        factory(*args, **kwargs)
    assert message in str(info.value)
    assert str(info.value).startswith(factory.__name__ + ":")


def test_v7_is_launched_in_pairs_and_signals_the_even_ctas_barrier():
    kernel = bw.hgemm_v7(512, 512, 256)
    (signature,) = kernels(kernel.build())
    assert signature.cluster == (2, 1, 1) and signature.grid == (8, 1, 1)
    ptx = tilemlir.compile(kernel, target="sm_100a", cache=False).ptx
    assert "mapa.shared::cluster" in ptx
    assert "mbarrier::complete_tx::bytes.cta_group::2" in ptx
    assert ".multicast::cluster.b64" in ptx


@pytest.mark.parametrize("args,kwargs,message", [
    ((256, 192, 256), dict(BN=48, EPI_N=16), "BN=48 must be a multiple of 32"),
    ((384, 256, 256), {}, "M=384 is not a multiple of the pair's 256 rows"),
])
def test_v7_rejects_shapes_a_pair_cannot_split(args, kwargs, message):
    with pytest.raises(ShapeError, match=message):
        bw.hgemm_v7(*args, **kwargs)


def _pair_mma(guarded: bool):
    layout = T.mma_shared_layout("float16", "128B", (128, 64))
    b_layout = T.mma_shared_layout("float16", "128B", (64, 64))

    @T.prim_func
    def pair_mma(A: T.Buffer((256, 64), "float16")):
        pid = T.cta_id([2])
        T.cluster_shape([2])
        warp = T.warp_id_in_wg([4])
        lane = T.lane_id([32])
        pool = T.SMEMPool()
        tmem_addr = pool.alloc((1,), "uint32")
        pool.move_base_to(1024)
        As = pool.alloc((128, 64), "float16", layout=layout)
        Bs = pool.alloc((64, 64), "float16", layout=b_layout)
        pool.commit()
        tmem = T.decl_buffer((128, 128), "float32", scope="tmem", allocated_addr=tmem_addr[0],
                             layout=T.TileLayout(T.S[(128, 128):(1 @ T.TLane, 1 @ T.TCol)]))
        rank = T.cuda.cluster_ctarank()
        if warp == 0:
            if (rank % 2 == 0) if guarded else (rank < 2):
                if T.ptx.elect_sync():
                    T.tile.gemm_async(tmem[:, :], As[:, :], Bs[:, :], accum=False, cta_group=2)
    return pair_mma


def test_pair_mma_must_be_issued_by_the_even_cta_only():
    with pytest.raises(T.KernelError, match="gemm_async with cta_group 2 is issued by the even "
                                            "CTA of the pair only"):
        _pair_mma(guarded=False).build()
    ptx = tilemlir.compile(_pair_mma(guarded=True), target="sm_100a", cache=False).ptx
    assert "tcgen05.mma.cta_group::2.kind::f16" in ptx


def test_not_for_hopper():
    with pytest.raises(Exception, match="tcgen05"):
        tilemlir.compile(bw.hgemm_v5(256, 256, 256), target="sm_90a", cache=False)


def _constant(value):
    from mlir import ir
    owner = value.owner
    return ir.IntegerAttr(owner.attributes["value"]).value \
        if not isinstance(owner, ir.Block) and owner.name == "arith.constant" else None


def _waits_after_the_last_load(module):
    """The run of tile.mbarrier_waits that first follows the producer's last TMA load in program
    order (only address arithmetic between them), each as (the alloc_shared offset of its
    barrier, the stage and the phase parity, constants or None)."""
    from mlir import ir
    ops = []
    module.operation.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE,
                          ir.WalkOrder.PRE_ORDER)
    last = max(i for i, op in enumerate(ops) if op.name == "tile.copy_async"
               and '"global"' in str(op.operands[1].type))
    waits = []
    for op in ops[last + 1:]:
        if op.name == "tile.mbarrier_wait":
            address = op.operands[0].owner                             # tile.addr(buffer, i)
            barrier = address.operands[0].owner
            waits.append((ir.IntegerAttr(barrier.attributes["offset"]).value,
                          _constant(address.operands[1]), _constant(op.operands[1])))
        elif waits and not (op.name.startswith("arith.") or op.name == "tile.addr"):
            break
    return waits


EMPTY_OFFSET = 40       # the `empty` barriers: after the TMEM address (8 bytes) and `full` (32)


@pytest.mark.parametrize("factory", FACTORIES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("K,stages,parities", [
    (128, [2, 3, 0, 1], [1, 1, 0, 0]),       # stages 2 and 3 never used: free at once
    (320, [1, 2, 3, 0], [0, 0, 0, 1]),
    (1024, [0, 1, 2, 3], [1, 1, 1, 1]),
    (1152, [2, 3, 0, 1], [1, 1, 0, 0]),
], ids=["2-k-tiles", "5-k-tiles", "16-k-tiles", "18-k-tiles"])
def test_the_producer_drains_the_last_empty_phases(factory, K, stages, parities):
    """After its last load the producer waits for the last phase of every `empty` barrier
    (CUTLASS's producer tail), before the role ends: the commits' arrivals have landed before
    the CTA deallocates and exits. In ring order from k-tile K / 64, the phase each stage's
    last commit completes; v6's step counter is dynamic (its stages and parities are not
    constants)."""
    waits = _waits_after_the_last_load(factory(1024, 1024, K).build())
    assert [offset for offset, _, _ in waits] == [EMPTY_OFFSET] * 4
    if factory is not bw.hgemm_v6:
        assert [stage for _, stage, _ in waits] == stages
        assert [parity for _, _, parity in waits] == parities


@pytest.mark.parametrize("K", [128, 384], ids=["fewer-k-tiles-than-stages", "ring-wraps"])
def test_v4_with_its_drain_runs_in_the_interpreter(K):
    """The interpreter counts mbarrier phases and fails a wait for a phase that never
    completes: v4 (one thread loads and issues; no warp roles) runs to the end, its drain
    included, and computes A . B^T."""
    import numpy as np
    rng = np.random.default_rng(K)
    a = rng.uniform(-1, 1, (128, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (128, K)).astype(np.float16)
    d = np.zeros((128, 128), np.float16)
    tilemlir.interpret(bw.hgemm_v4(128, 128, K, BN=128), a, b, d)
    expected = a.astype(np.float32) @ b.astype(np.float32).T
    np.testing.assert_allclose(d.astype(np.float32), expected, atol=2e-2, rtol=2e-2)

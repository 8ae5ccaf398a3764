"""The Hopper GEMM factories (CPU): configurations they cannot build are refused up front with
the reason, and the ones they accept compile to sm_90a PTX with the tensor maps they need."""

import re
import tempfile
from pathlib import Path

import pytest

import tilemlir
from tilemlir.kernels.hgemm_hopper import (ShapeError, hgemm_v4, hgemm_v5, hgemm_v6, hgemm_v7,
                                           hgemm_v8)


@pytest.mark.parametrize("factory, args, kwargs, message", [
    (hgemm_v5, (100, 256, 64), {}, "M=100 is not a multiple of the tile's M extent 128"),
    (hgemm_v4, (128, 256, 60), {}, "K=60 must be a multiple of 8"),
    (hgemm_v5, (192, 256, 64), dict(BM=96), "BM=96 must be 64, 128, 192 or 256"),
    (hgemm_v5, (128, 512, 64), dict(BN=512), "BN=512 must be a multiple of 8 up to 256"),
    (hgemm_v5, (128, 256, 64), dict(BK=32), "BK must be 64"),
    (hgemm_v5, (128, 256, 64), dict(STAGES=5), "5 stages of 49152 bytes exceed the 227 KiB"),
    (hgemm_v5, (128, 256, 64), dict(dtype="float32"), "dtype must be one of"),
    (hgemm_v5, (256, 128, 64), dict(BM=256, BN=128, STAGES=3, CONSUMER_REGS=200),
     "register budgets 40 + 4 x 200 per thread exceed the 480 the CTA's 5 warpgroups hold"),
    (hgemm_v6, (1000, 1004, 64), {}, "N=1004 must be a multiple of 8"),
    (hgemm_v6, (128, 256, 64), dict(EPI_N=96), "EPI_N=96 must be a multiple of 64 dividing"),
    (hgemm_v6, (128, 256, 64), dict(EPI_N=256), "4 stages and a 128x256 staging buffer exceed"),
    (hgemm_v7, (1000, 1004, 64), {}, "N=1004 must be a multiple of 8"),
    (hgemm_v7, (256, 248, 64), dict(BN=248), "BN=248 must be a multiple of 16"),
    (hgemm_v7, (128, 256, 64), dict(EPI_N=256), "4 stages and a 128x256 staging buffer exceed"),
    (hgemm_v7, (256, 256, 64), dict(SMS=1), "SMS=1 leaves no room for one cluster of 2 CTAs"),
    (hgemm_v7, (256, 256, 64), dict(BK=32), "BK must be 64"),
    (hgemm_v7, (256, 384, 64), dict(BN=384, STAGES=2, EPI_N=64),
     "BN=384 must be a multiple of 8 up to 320 (wgmma n; above 256 several instructions"),
    (hgemm_v6, (128, 320, 64), dict(BN=320, STAGES=3, EPI_N=64),
     "BN=320 must be a multiple of 8 up to 256 "),
    (hgemm_v8, (1000, 1004, 8192), {}, "N=1004 must be a multiple of 8"),
    (hgemm_v8, (1000, 1000, 8192), dict(SPLIT_K=3), "SPLIT_K=3 must be 2 or 4 (one or two"),
    (hgemm_v8, (1000, 1000, 8192), dict(SPLIT_K=True), "SPLIT_K=True must be 2 or 4"),
    (hgemm_v8, (1000, 1000, 128), dict(SPLIT_K=4), "SPLIT_K=4 exceeds the 2 k-tiles of K=128"),
    (hgemm_v8, (1000, 1000, 8192), dict(BN=192, STAGES=4),
     "BN=192 must be a multiple of 128 (each CTA of the pair reduces and stores half"),
    (hgemm_v8, (1000, 1000, 8192), dict(STAGES=5), "5 stages of 49152 bytes exceed"),
])
def test_refused_with_the_reason(factory, args, kwargs, message):
    with pytest.raises(ShapeError, match=message.replace("(", r"\(").replace("+", r"\+")):
        factory(*args, **kwargs)


def _warpgroup_budgets(ptx: str) -> tuple[int, int, list[int], list[int]]:
    """(threads, registers per thread at launch, setmaxnreg.dec counts, .inc counts)."""
    threads = int(re.search(r"\.maxntid (\d+)", ptx)[1])
    launch = int(re.search(r"^\.maxnreg (\d+)$", ptx, re.M)[1])
    dec = [int(c) for c in re.findall(r"setmaxnreg\.dec\.sync\.aligned\.u32\s+(\d+);", ptx)]
    inc = [int(c) for c in re.findall(r"setmaxnreg\.inc\.sync\.aligned\.u32\s+(\d+);", ptx)]
    return threads, launch, dec, inc


def _budget_kernels():
    from tilemlir.kernels.attention import flash_attention
    from tilemlir.kernels.fp8_gemm import fp8_gemm
    from tilemlir.kernels.gemm_decode import hgemm_decode
    from tilemlir.kernels.gemm_epilogue import hgemm_fused
    return [
        ("v5 BM=192", lambda: hgemm_v5(192, 128, 64, BM=192, BN=128, STAGES=3)),
        ("v6 tma", lambda: hgemm_v6(1000, 1000, 1000)),
        ("v6 cp.async BM=128", lambda: hgemm_v6(2999, 8193, 769, PRODUCER="cp_async",
                                                EPILOGUE="direct")),
        ("v6 cp.async BM=64", lambda: hgemm_v6(2048, 2050, 2047, BM=64, BN=64, STAGES=8,
                                               EPI_N=64, PRODUCER="cp_async",
                                               EPILOGUE="direct")),
        ("v7", lambda: hgemm_v7(1000, 1000, 1000)),
        ("decode BN=128 cp.async", lambda: hgemm_decode(1, 5619, 2476, BN=128, SPLIT_K=3,
                                                        PRODUCER="cp_async")),
        ("fused cp.async BM=128", lambda: hgemm_fused(333, 444, 555, BM=128)),
        ("fp8 cp.async", lambda: fp8_gemm(300, 264, 200, out_dtype="bfloat16",
                                          PRODUCER="cp_async", EPILOGUE="direct",
                                          CLUSTER=False)),
        ("attention", lambda: flash_attention(1, 2, 256, 128)),
    ]


@pytest.mark.parametrize("name, make", _budget_kernels(), ids=[n for n, _ in _budget_kernels()])
def test_setmaxnreg_budgets_fit_what_the_cta_holds_from_launch(name, make):
    """setmaxnreg.dec gives registers back to the CTA's pool and .inc waits until the pool
    holds enough: the producer warpgroup's and the consumers' budgets together must not exceed
    the registers the CTA got at launch (.maxnreg x threads), or the consumers wait forever.
    On the H200 the cp.async kernels of 3 warpgroups (96 + 2 x 208 > 3 x 168) hung so."""
    ptx = tilemlir.compile(make(), target="sm_90a", cache=False).ptx
    threads, launch, dec, inc = _warpgroup_budgets(ptx)
    assert len(set(dec)) == 1 and len(set(inc)) == 1, (dec, inc)
    producers = 128                                    # one producer warpgroup
    assert dec[0] * producers + inc[0] * (threads - producers) <= launch * threads, \
        f"{name}: {dec[0]} x {producers} + {inc[0]} x {threads - producers} > {launch} x {threads}"


def test_consumer_budget_fits_the_register_file():
    # three consumers: 40 + 3 x 152 <= 512 registers per thread of a warpgroup
    kernel = tilemlir.compile(hgemm_v5(192, 128, 64, BM=192, BN=128, STAGES=3),
                              target="sm_90a", cache=False)
    assert "setmaxnreg.inc.sync.aligned.u32 \t152;" in kernel.ptx


@pytest.mark.parametrize("factory, shape, maps", [
    (hgemm_v4, (128, 256, 64), [(0, (128, 64)), (1, (256, 64))]),
    (hgemm_v5, (128, 256, 64), [(0, (128, 64)), (1, (256, 64))]),
    (hgemm_v6, (1000, 1000, 1000), [(0, (128, 64)), (1, (256, 64)), (2, (64, 64))]),
    # v7: each CTA loads half of B's 256 rows (multicast to both CTAs of the pair)
    (hgemm_v7, (1000, 1000, 1000), [(0, (128, 64)), (1, (128, 64)), (2, (64, 64))]),
])
def test_tensor_maps_follow_the_shared_tiles(factory, shape, maps):
    kernel = tilemlir.compile(factory(*shape), target="sm_90a", cache=False)
    got = [(r.param, r.box, r.swizzle) for r in kernel.signature.tensor_maps]
    assert got == [(p, box, 128) for p, box in maps]
    assert [r.arg for r in kernel.signature.tensor_maps] == list(range(3, 3 + len(maps)))


@pytest.mark.parametrize("shape, config, grid", [
    ((8192, 8192, 8192), {}, 132),                   # 1024 pairs of tiles: 66 clusters
    ((384, 768, 320), {}, 12),                       # 3 tile rows: 2 pair rows x 3 columns
    ((256, 256, 64), {}, 2),                         # one pair
    ((1024, 1024, 1024), dict(SMS=7), 6),            # whole clusters, at most SMS CTAs
])
def test_v7_launches_whole_clusters_of_two(shape, config, grid):
    kernel = tilemlir.compile(hgemm_v7(*shape, **config), target="sm_90a", cache=False)
    assert kernel.signature.cluster == (2, 1, 1)
    assert kernel.signature.grid == (grid, 1, 1)
    ptx = kernel.ptx
    assert ".reqnctapercluster 2, 1, 1" in ptx
    # B: half a tile per CTA, multicast to both; A: this CTA's own tile
    assert ptx.count(".multicast::cluster [") >= 1
    assert "mbarrier.arrive.shared::cluster.b64 _," in ptx         # on the peer's barrier
    assert ptx.count("barrier.cluster.arrive.aligned;") == 2     # after init, before exit


def _register_values(ptx: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"mov\.b32\s+(%r\d+), (\d+);", ptx)}


def test_v7_stage_barriers_count_both_ctas():
    """The full barrier expects the whole stage (A and both halves of B); the empty barrier
    counts the consumers of both CTAs."""
    ptx = tilemlir.compile(hgemm_v7(1024, 1024, 1024, BM=128, BN=128, STAGES=3),
                           target="sm_90a", cache=False).ptx
    values = _register_values(ptx)
    armed = {values[r] for r in re.findall(r"mbarrier\.arrive\.expect_tx\.shared\.b64 "
                                           r"%rd\d+, \[[^]]+\], (%r\d+);", ptx)}
    assert armed == {(128 + 128) * 64 * 2}
    counts = {addr: values[r] for addr, r in
              re.findall(r"mbarrier\.init\.shared\.b64\s+\[([^]]+)\], (%r\d+);", ptx)}
    full = {a: c for a, c in counts.items() if int(a.partition("+")[2] or 0) < 3 * 8}
    empty = {a: c for a, c in counts.items() if a not in full}
    assert set(full.values()) == {1} and len(full) == 3
    assert set(empty.values()) == {2 * 2} and len(empty) == 3      # 2 CTAs x 2 consumers


def test_v7_cross_cta_handoff_scope():
    """By default the consumers' arrivals on the peer's barrier and the producer's waits are
    CTA-scope (no MEMBAR.GPU per stage); CLUSTER_RELEASE=True makes them cluster-scope,
    everything else unchanged."""
    cluster = tilemlir.compile(hgemm_v7(1024, 1024, 1024, CLUSTER_RELEASE=True),
                               target="sm_90a", cache=False).ptx
    cta = tilemlir.compile(hgemm_v7(1024, 1024, 1024), target="sm_90a", cache=False).ptx
    assert "mbarrier.arrive.release.cluster.shared::cluster.b64 _," in cluster
    assert "mbarrier.try_wait.parity.acquire.cluster" in cluster
    assert "mbarrier.arrive.shared::cluster.b64 _," in cta
    assert "release.cluster.shared" not in cta and "acquire.cluster" not in cta
    assert cta.count(".multicast::cluster [") == cluster.count(".multicast::cluster [")


def test_v7_split_k_takes_the_workspace_and_counters_of_v6():
    from tilemlir.kernels.hgemm_hopper import split_k_counters_shape, split_k_workspace_shape
    kernel = tilemlir.compile(hgemm_v7(1000, 1000, 8192, SPLIT_K=4), target="sm_90a",
                              cache=False)
    params = {p.name: p for p in kernel.signature.params}
    assert params["W"].shape == split_k_workspace_shape(1000, 1000, 128, 256, 4)
    assert params["C"].shape == split_k_counters_shape(1000, 1000, 128, 256)
    assert kernel.signature.grid == (128, 1, 1)          # 16 pairs x 4 splits, in clusters of 2
    assert "atom.global.add.u32" in kernel.ptx                # the tile counters
    with pytest.raises(ShapeError, match="SPLIT_K=129 must be an integer from 1 to the 128"):
        hgemm_v7(1000, 1000, 8192, SPLIT_K=129)


@pytest.mark.parametrize("split, params, grid", [
    (2, ["A", "B", "D", "W"], 64),            # one cluster of 2 per tile, 32 tiles
    (4, ["A", "B", "D", "W", "C"], 128),      # two clusters per tile, joined by counters
])
def test_v8_launches_pairs_and_takes_its_workspace(split, params, grid):
    from tilemlir.kernels.hgemm_hopper import split_k_pair_counters_shape, split_k_workspace_shape
    kernel = tilemlir.compile(hgemm_v8(1000, 1000, 8192, SPLIT_K=split), target="sm_90a",
                              cache=False)
    signature = kernel.signature
    assert [p.name for p in signature.params] == params
    assert signature.params[3].shape == split_k_workspace_shape(1000, 1000, 128, 256, split)
    if split == 4:
        assert signature.params[4].shape == split_k_pair_counters_shape(1000, 1000, 128, 256)
    assert signature.grid == (grid, 1, 1)
    ptx = kernel.ptx
    assert ".reqnctapercluster 2, 1, 1" in ptx
    # the pair's hand-off: release and acquire at cluster scope, on the peer's barrier
    assert ptx.count("mbarrier.arrive.release.cluster.shared::cluster.b64") == 2   # per rank
    assert "mbarrier.try_wait.parity.acquire.cluster.shared.b64" in ptx
    assert ("atom.global.add.u32" in ptx) == (split == 4)


@pytest.mark.parametrize("factory, config", [
    (hgemm_v6, dict(BM=128, BN=64, STAGES=8, EPI_N=64)),
    (hgemm_v7, dict(BM=64, BN=128, STAGES=8)),
    (hgemm_v8, dict(BM=64, BN=128, STAGES=8, SPLIT_K=4)),
    (hgemm_v7, dict(BN=192, STAGES=4, EPI_N=64)),
    (hgemm_v7, dict(BN=320, STAGES=3, EPI_N=64)),      # 160 accumulators a thread: no spills
])
def test_ptxas_keeps_setmaxnreg_and_the_wgmma_pipeline(factory, config):
    """Kernels that need few registers: without .maxnreg ptxas could not tell the register
    count at entry, dropped setmaxnreg (C7508) and serialized every wgmma (C7520: a wait after
    each instruction). With it, neither, and the main loop keeps one wgmma group in flight."""
    import subprocess

    from tilemlir.target.ptx import find_ptxas
    ptxas = find_ptxas()
    if ptxas is None:
        pytest.skip("needs ptxas (pip install '.[test]')")
    ptx = tilemlir.compile(factory(1000, 1000, 8192, **config), target="sm_90a", cache=False).ptx
    assert re.search(r"^\.maxnreg (168|248)$", ptx, re.M), "no .maxnreg for setmaxnreg"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.ptx"
        path.write_text(ptx)
        run = subprocess.run([str(ptxas), "-arch=sm_90a", "-v", str(path), "-o",
                              str(path.with_suffix(".cubin"))], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "C7508" not in run.stderr and "C7520" not in run.stderr, run.stderr
    assert " 0 bytes spill stores" in run.stderr, run.stderr
    # BN above 256: two wgmma along N per k16 step (n160 each at 320), none wider
    widths = set(re.findall(r"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16", ptx))
    assert widths == {str(config.get("BN", 256) // (2 if config.get("BN", 256) > 256 else 1))}

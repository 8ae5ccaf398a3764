"""The interpreter's race detector and deadlock report on a small warp-specialized GEMM
(race_kernels.py) with one synchronisation step planted wrong at a time: each race names both
Python lines, each deadlock every waiting line; the correct kernel runs clean and right. CPU
only, well under a second each."""

import linecache
import re

import numpy as np
import pytest

import tilemlir
from race_kernels import PLANTS, pipeline_gemm
from tilemlir.reference import InterpretError, RaceError


def _run(plant=None, cluster=False, races=True):
    rng = np.random.default_rng(0)
    M = 128 if cluster else 64
    a = rng.standard_normal((M, 256)).astype(np.float16)
    b = rng.standard_normal((128, 256)).astype(np.float16)
    d = np.full((M, 128), np.nan, np.float16)
    tilemlir.interpret(pipeline_gemm(cluster=cluster, plant=plant), a, b, d, races=races)
    return d, a.astype(np.float32) @ b.astype(np.float32).T


def _source(line: str) -> str:
    return linecache.getline(pipeline_gemm.__globals__["__file__"], int(line)).strip()


def _race_lines(message: str) -> tuple[str, str]:
    """The sources of the access that found the race (the message's first line) and of the
    one it races with."""
    here = re.match(r"\S*race_kernels\.py:(\d+): ", message)
    there = re.search(r"(?:read|write|gemm_async) at \S*race_kernels\.py:(\d+) ", message)
    assert here and there, message
    return _source(here.group(1)), _source(there.group(1))


@pytest.mark.parametrize("cluster", [False, True], ids=["cta", "cluster"])
def test_the_correct_pipeline_runs_clean(cluster):
    d, ref = _run(cluster=cluster)
    assert np.abs(d - ref).max() < 0.05


# Each planted race: the two lines the report must name (the access that finds it, the other).
RACES = {
    "no_full_wait": ("Tx.wg.gemm_async", "Tx.copy_async(As["),
    "early_release": ("Tx.copy_async(As[", "Tx.wg.gemm_async"),
    "no_epilogue_barrier": ("Tx.copy_async(D[", "Tx.wg.copy(Cs["),
    "no_proxy_fence": ("Tx.copy_async(D[", "Tx.wg.copy(Cs["),
    "no_store_wait": ("Tx.wg.copy(Cs[", "Tx.copy_async(D["),
    "no_wgmma_wait": ("Tx.wg.cast(out, acc)", "Tx.wg.gemm_async"),
}


@pytest.mark.parametrize("cluster", [False, True], ids=["cta", "cluster"])
@pytest.mark.parametrize("plant", sorted(RACES))
def test_planted_races_are_reported_with_both_lines(plant, cluster):
    with pytest.raises(RaceError) as err:
        _run(plant, cluster)
    message = str(err.value)
    here, there = _race_lines(message)
    assert here.startswith(RACES[plant][0]), message
    assert there.startswith(RACES[plant][1]), message


def test_a_stage_released_early_races_with_the_peers_multicast():
    """In a cluster the producer's multicast writes the peer's stage: freed early there, the
    write races with the peer's wgmma (reported in the shared memory it lands in)."""
    with pytest.raises(RaceError, match=r"shared memory of CTA \([01], 0, 0\).*wgmma"):
        _run("early_release", cluster=True)


def test_without_the_detector_the_racy_kernel_runs():
    """races=False: a missing fence or barrier changes nothing in the interpreter, whose async
    copies complete when issued."""
    d, ref = _run("no_proxy_fence", races=False)
    assert np.abs(d - ref).max() < 0.05


@pytest.mark.parametrize("plant, cluster, waiting", [
    ("no_release", False, 2),
    ("no_peer_release", True, 3),
])
def test_deadlocks_name_every_waiting_line(plant, cluster, waiting):
    with pytest.raises(InterpretError) as err:
        _run(plant, cluster)
    message = str(err.value)
    assert "deadlock: no thread can go on" in message
    lines = [line for line in message.splitlines()[1:] if ": at " in line]
    sources = {_source(re.search(r"race_kernels\.py:(\d+)", line).group(1)) for line in lines}
    assert "T.ptx.mbarrier.try_wait(empty.ptr_to([s]), (kt // STAGES + 1) % 2)" in sources
    assert len(lines) >= waiting and plant in PLANTS, message

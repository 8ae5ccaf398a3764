"""tilemlir.autotune (CPU: the timing function is injected): the fastest configuration wins,
refused ones are skipped with their reason, and the choice persists for another process."""

import json

import pytest

import tilemlir
from tilemlir.kernels.hgemm_hopper import hgemm_v5
from tilemlir.runtime.compiler import cache_root, clear_memory_cache

CONFIGS = [dict(STAGES=2), dict(STAGES=3), dict(STAGES=5)]      # 5 stages do not fit


@pytest.fixture
def timings(isolated_cache):
    """A bench that reads the kernel's stage count off its shared-memory size."""
    calls = []

    def bench(kernel, args):
        calls.append(kernel.signature.shared_memory)
        return {2: 3.0, 3: 1.0, 4: 2.0}[(kernel.signature.shared_memory - 1024) // 49152]
    return bench, calls


def test_fastest_configuration_wins_and_persists(timings):
    bench, calls = timings
    tuned = tilemlir.autotune(hgemm_v5, CONFIGS, target="sm_90a", bench=bench)
    kernel = tuned(256, 256, 256, "float16", args=("a", "b", "d"))
    assert kernel.signature.shared_memory == 1024 + 3 * 49152
    assert len(calls) == 2                                   # STAGES=5 never ran
    (key,) = tuned.rejected
    assert "5 stages of 49152 bytes exceed" in tuned.rejected[key][0][1]
    stored = json.loads((cache_root() / "autotune" /
                         "tilemlir.kernels.hgemm_hopper.hgemm_v5.json").read_text())
    assert stored[key]["config"] == {"STAGES": 3}

    # another process: a fresh tuner and no memory cache; nothing is timed again
    clear_memory_cache()
    again = tilemlir.autotune(hgemm_v5, CONFIGS, target="sm_90a", bench=bench)
    assert again(256, 256, 256, "float16").signature.shared_memory == 1024 + 3 * 49152
    assert len(calls) == 2


def test_other_arguments_are_another_key(timings):
    bench, calls = timings
    tuned = tilemlir.autotune(hgemm_v5, CONFIGS, target="sm_90a", bench=bench)
    tuned(256, 256, 256, "float16", args=("a",))
    tuned(512, 256, 256, "float16", args=("a",))
    assert len(calls) == 4


def test_unknown_key_needs_arguments_to_time_on(timings):
    bench, _ = timings
    tuned = tilemlir.autotune(hgemm_v5, CONFIGS, target="sm_90a", bench=bench)
    with pytest.raises(ValueError, match="pass args="):
        tuned(256, 256, 256, "float16")


def test_every_configuration_refused(timings):
    bench, _ = timings
    tuned = tilemlir.autotune(hgemm_v5, [dict(STAGES=5), dict(BK=32)], target="sm_90a",
                              bench=bench)
    with pytest.raises(ValueError, match="every configuration was refused.*BK must be 64"):
        tuned(256, 256, 256, "float16", args=("a",))


@pytest.mark.gpu
def test_do_bench_times_the_real_kernels(isolated_cache):
    torch = pytest.importorskip("torch")
    if torch.cuda.get_device_capability() != (9, 0):
        pytest.skip("hgemm_v5 needs an sm_90a GPU (Hopper)")
    from tilemlir.testing import do_bench
    a = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    b = torch.randn(1024, 1024, device="cuda", dtype=torch.float16)
    d = torch.full((1024, 1024), float("nan"), device="cuda", dtype=torch.float16)
    tuned = tilemlir.autotune(hgemm_v5, [dict(STAGES=3), dict(STAGES=4)])
    kernel = tuned(1024, 1024, 1024, "float16", args=(a, b, d))
    kernel(a, b, d)
    torch.testing.assert_close(d.float(), a.float() @ b.float().T, rtol=2e-2, atol=0.7)
    assert 0 < do_bench(lambda: kernel(a, b, d)) < 10

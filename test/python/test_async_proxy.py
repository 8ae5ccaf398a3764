"""tile-check-async-proxy on the shipped kernels: every one passes, and taking a proxy fence out
of one makes tilemlir.compile fail with a diagnostic naming the write and the read.
(test/Check/async-proxy.mlir has the rejected patterns on hand-written tile IR.)"""

import importlib.util
import sys
from pathlib import Path

import pytest

import tilemlir
from tilemlir.checks.async_proxy import check_async_proxy
from tilemlir.dsl.primitives import _Fence
from tilemlir.kernels import hgemm_hopper, hgemm_tcgen05

REPO = Path(__file__).resolve().parents[2]


def _hash_cases():
    """The shipped kernels at the shapes their tests use: bench/ptx_hashes.py's CASES."""
    spec = importlib.util.spec_from_file_location("ptx_hashes", REPO / "bench" / "ptx_hashes.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # its dataclasses look their module up
    spec.loader.exec_module(module)
    return [(c.label, c.kernel, c.args, c.kwargs) for c in module.CASES]


HOPPER = [(f"hgemm_hopper.hgemm_v{v}{shape}", f"tilemlir.kernels.hgemm_hopper:hgemm_v{v}",
           shape, {}) for v in (4, 5, 6) for shape in ((1024, 1024, 1024), (1000, 1000, 1000))
          if v == 6 or shape[0] % 128 == 0]
KERNELS = _hash_cases() + HOPPER


def _build(kernel: str, args, kwargs):
    module_name, attribute = kernel.split(":")
    obj = getattr(importlib.import_module(module_name), attribute)
    return (obj(*args, **kwargs) if args or kwargs else obj).build()


@pytest.mark.parametrize("label,kernel,args,kwargs", KERNELS, ids=[k[0] for k in KERNELS])
def test_every_shipped_kernel_passes(label, kernel, args, kwargs):
    module = _build(kernel, args, kwargs)
    with module.context:
        assert check_async_proxy(module.operation) == []


def _without_proxy_fences(monkeypatch):
    monkeypatch.setattr(_Fence, "proxy_async", lambda self, space="shared::cta": None)


def test_seed_tcgen05_without_its_fence_is_rejected_naming_copy_and_mma(monkeypatch):
    _without_proxy_fences(monkeypatch)
    with pytest.raises(Exception) as info:
        tilemlir.compile(hgemm_tcgen05.hgemm_v2(128, 128, 256), target="sm_100a", cache=False)
    text = str(info.value)
    source = hgemm_tcgen05.__file__
    assert f"{source}\":" in text                     # located in the kernel's source
    for operand in ("A", "B"):
        assert (f"async-proxy read of shared memory by 'tile.gemm_async' (operand {operand}) "
                f"may see the generic-proxy write by 'tile.copy' (operand DST) at {source}:"
                in text)
    assert "add T.ptx.fence.proxy_async() after the write" in text


def test_tma_store_epilogue_without_its_fence_is_rejected(monkeypatch):
    _without_proxy_fences(monkeypatch)
    module = hgemm_hopper.hgemm_v6(1024, 1024, 1024).build()
    with module.context:
        problems = [message for _, message in check_async_proxy(module.operation)]
    # the stmatrix copy into the staging buffer, then the TMA store out of it
    assert problems and all("'tile.copy_async' (operand SRC) may see the generic-proxy write by "
                            "'tile.copy' (operand DST)" in m for m in problems)

"""How the GPU tests run a kernel: outputs poisoned with NaN, launch, wait, then compare with a
torch reference, so that an output element the kernel never writes cannot pass by chance.

    d = run_poisoned(kernel, [a, b], [((m, n), torch.float32)])[0]
    assert_written(d)
    assert_matches(d, a.double() @ b.double(), rel_error=1e-5)

or all three at once: `check(kernel, [a, b], ref, torch.float32, rel_error=1e-5)`.
"""

import pytest

torch = pytest.importorskip("torch")


def poisoned(shape, dtype) -> torch.Tensor:
    return torch.full(tuple(shape), float("nan"), device="cuda", dtype=dtype)


def run_poisoned(kernel, inputs, outputs) -> list[torch.Tensor]:
    """Runs kernel(*inputs, *outs), each out a NaN-filled (shape, dtype) of `outputs`, waits
    for the GPU and returns the outs."""
    outs = [poisoned(shape, dtype) for shape, dtype in outputs]
    kernel(*inputs, *outs)
    torch.cuda.synchronize()
    return outs


def assert_written(out: torch.Tensor) -> None:
    assert not torch.isnan(out).any(), "some outputs were never written"


def assert_matches(out: torch.Tensor, ref: torch.Tensor, *, rel_error: float | None = None,
                   rtol: float | None = None, atol: float | None = None) -> None:
    """`out` (in `ref`'s dtype) against `ref`: within `rel_error` in relative Frobenius norm,
    within torch's assert_close(rtol, atol), or, with no tolerance given, exactly equal."""
    out = out.to(ref.dtype)
    if rel_error is not None:
        err = ((out - ref).norm() / ref.norm()).item()
        assert err < rel_error, f"relative error {err:.2e}"
    elif rtol is not None or atol is not None:
        torch.testing.assert_close(out, ref, rtol=rtol, atol=atol)
    else:
        assert torch.equal(out, ref)


def check(kernel, inputs, ref: torch.Tensor, out_dtype, **tolerance) -> torch.Tensor:
    """kernel(*inputs, out) with `out` poisoned, every element written and matching `ref`."""
    (out,) = run_poisoned(kernel, inputs, [(ref.shape, out_dtype)])
    assert_written(out)
    assert_matches(out, ref, **tolerance)
    return out

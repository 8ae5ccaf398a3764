"""Which CUDA stream a call runs on: the caller's, as every torch / cupy extension does.

With `stream=` given, that stream: a torch.cuda.Stream, a cupy Stream, a cuda.core Stream (or
anything with `__cuda_stream__`), or a raw CUstream handle as an int. Without it, the current
stream of the tensors' framework on the tensors' device (torch.cuda.current_stream(device),
cupy's current stream); tensors of another framework (DLPack only) run on the legacy default
stream, which orders them after all blocking work on the device.
"""

from __future__ import annotations

from tilemlir.runtime.args import ArgumentError

LEGACY_DEFAULT_STREAM = 0


def stream_handle(stream) -> int:
    """The CUstream handle of a stream object or raw handle."""
    if isinstance(stream, bool):
        raise ArgumentError(f"stream must be a stream object or a CUstream handle, got {stream!r}")
    if isinstance(stream, int):
        if stream < 0:
            raise ArgumentError(f"stream handle must be non-negative, got {stream}")
        return stream
    if hasattr(stream, "__cuda_stream__"):
        info = stream.__cuda_stream__()
        return int(info[1] if isinstance(info, tuple) else info)
    for attr in ("cuda_stream", "ptr", "handle"):      # torch, cupy, cuda.core
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise ArgumentError(f"stream must be a torch / cupy / cuda.core stream or a CUstream handle, "
                        f"got {type(stream).__name__}")


def current_stream(tensor, device: int) -> int:
    """The current stream of `tensor`'s framework on `device`."""
    module = type(tensor).__module__
    if module.startswith("torch"):
        import torch
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)   # no Stream object: cheap
        return raw(device) if raw else torch.cuda.current_stream(device).cuda_stream
    if module.startswith("cupy"):
        import cupy
        with cupy.cuda.Device(device):
            return cupy.cuda.get_current_stream().ptr
    return LEGACY_DEFAULT_STREAM

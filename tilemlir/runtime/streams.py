"""Which CUDA stream a call runs on: the caller's, as every torch / cupy extension does.

With `stream=` given, that stream: anything with the `__cuda_stream__` protocol (a cuda.core
Stream, torch and cupy streams), a torch or cupy stream of a version before that protocol,
cuda-python's CUstream, or a raw CUstream handle as an int. Without it, the current
stream of the tensors' framework on the tensors' device (torch.cuda.current_stream(device),
cupy's current stream); tensors of another framework (DLPack only) run on the legacy default
stream, which orders them after all blocking work on the device.
"""

from __future__ import annotations

from tilemlir.runtime.args import ArgumentError

LEGACY_DEFAULT_STREAM = 0


def stream_handle(stream) -> int:
    """The CUstream handle of a stream object or raw handle: the `__cuda_stream__` protocol
    (cuda.core, recent torch and cupy), cuda-python's CUstream, and the handle attributes of
    torch and cupy versions before the protocol."""
    if isinstance(stream, bool):
        raise ArgumentError(f"stream must be a stream object or a CUstream handle, got {stream!r}")
    if isinstance(stream, int):
        if stream < 0:
            raise ArgumentError(f"stream handle must be non-negative, got {stream}")
        return stream
    if hasattr(type(stream), "__cuda_stream__"):
        info = stream.__cuda_stream__()
        if not (isinstance(info, tuple) and len(info) == 2 and isinstance(info[1], int)):
            raise ArgumentError(f"stream's __cuda_stream__() must return (version, handle), "
                                f"got {info!r}")
        return info[1]
    module = type(stream).__module__
    if module.startswith("torch") and hasattr(stream, "cuda_stream"):
        return int(stream.cuda_stream)
    if module.startswith("cupy") and hasattr(stream, "ptr"):
        return int(stream.ptr)
    if module.startswith("cuda.bindings"):
        from tilemlir.runtime.cuda import driver
        if isinstance(stream, driver().CUstream):
            return int(stream)
    raise ArgumentError(f"stream must be a stream object (__cuda_stream__, torch, cupy) or a "
                        f"CUstream handle, got {type(stream).__name__}")


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

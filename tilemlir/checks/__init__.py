"""Checks that run as passes and change nothing: each returns the problems it finds as
(location, message) pairs, which the pipeline reports as diagnostics.

    verify.py        tile-verify: what IRDL cannot say about tile IR (bounds, shared memory per
                     chip, extents, buffer types); tile-dispatch runs it first as well
    async_proxy.py   tile-check-async-proxy: an async-proxy read of shared memory that
                     generic-proxy writes reach without fence.proxy.async
    nvvm_ops.py      tile-check-target: an nvvm or nvgpu op the target chip cannot compile
"""

"""Helpers for benchmarking kernels: `do_bench` (CUDA events, L2 flushed, median)."""

from tilemlir.runtime.tuning import do_bench

__all__ = ["do_bench"]

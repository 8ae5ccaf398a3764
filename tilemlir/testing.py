"""Timing GPU work: the one routine every benchmark and the autotuner use.

    from tilemlir.testing import do_bench
    ms = do_bench(lambda: kernel(a, b, d))                 # median ms, CUDA events, L2 flushed
    t = do_bench(kernel, args=[(a0, b0, d0), (a1, b1, d1)], reps=50, spin_us=50, stats=True)
    t.median, t.min, t.quantile(0.8), t.times_ms           # every timed call's milliseconds
    ours, peer = do_bench_alternating([kernel, torch_fn], args=sets, reps=50, spin_us=50)

Each timed call is bracketed by CUDA events on the stream; before it, a 256 MiB buffer is
overwritten (L2 flushed, so no call is served by the previous one's cache lines) and, with
`spin_us`, the GPU spins for that long (so the events time the kernel, not the host's launch
overhead). `do_bench_alternating` times several functions in turn, block by block, each block
after its own warm-up: the power-limited clock settles for each function, and none is always
timed first or last. Needs torch with CUDA; the bookkeeping (`_bench`) runs on any clock.
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass
from typing import Callable, Sequence

__all__ = ["Timing", "do_bench", "do_bench_alternating", "do_bench_blocks"]

# torch.cuda._sleep counts SM cycles; at the H200's ~2 GHz clock (lower clocks only make the
# spin longer, which is harmless: it must merely outlast the host's queueing of one call).
SPIN_CYCLES_PER_US = 2000
FLUSH_BYTES = 256 << 20
# flush_l2: True / "write" overwrites the buffer (the L2 then holds its dirty lines, whose
# write-back to memory falls partly inside the next timed call), "read" reads it (clean lines:
# nothing of the flush is left to write back), False none.
FLUSHES = (True, False, "write", "read")


@dataclass(frozen=True)
class Timing:
    """The milliseconds of every timed call, in order, and their statistics."""
    times_ms: tuple[float, ...]

    def __post_init__(self):
        if not self.times_ms:
            raise ValueError("Timing needs at least one time")

    @classmethod
    def merge(cls, timings: Sequence["Timing"]) -> "Timing":
        return cls(tuple(t for timing in timings for t in timing.times_ms))

    @property
    def median(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.times_ms)

    @property
    def min(self) -> float:
        return min(self.times_ms)

    @property
    def max(self) -> float:
        return max(self.times_ms)

    @property
    def stdev(self) -> float:
        return statistics.stdev(self.times_ms) if len(self.times_ms) > 1 else 0.0

    def quantile(self, q: float) -> float:
        """Linear interpolation between the closest ranks (numpy's default)."""
        if not 0.0 <= q <= 1.0:
            raise ValueError(f"quantile q must be within [0, 1], got {q}")
        ordered = sorted(self.times_ms)
        pos = q * (len(ordered) - 1)
        low, high = math.floor(pos), math.ceil(pos)
        return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)

    def __str__(self) -> str:
        return (f"median {self.median:.4f} ms (min {self.min:.4f}, p20 {self.quantile(0.2):.4f}, "
                f"p80 {self.quantile(0.8):.4f}, max {self.max:.4f}, n {len(self.times_ms)})")


class _CudaClock:
    """What `_bench` needs from the GPU: events on `stream`, the L2 flush, the spin."""

    def __init__(self, stream, flush_l2):
        from tilemlir.runtime.cuda import require_torch_cuda
        torch = require_torch_cuda("do_bench")
        self._torch = torch
        self._stream = stream or torch.cuda.current_stream()
        self._flush = (torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
                       if flush_l2 else None)
        self._read_flush = flush_l2 == "read"
        if self._read_flush:
            self._flush.zero_()
            self._flush = self._flush.view(torch.int64)
            self._sink = torch.empty((), dtype=torch.int64, device="cuda")

    def mark(self):
        event = self._torch.cuda.Event(enable_timing=True)
        event.record(self._stream)
        return event

    @staticmethod
    def elapsed_ms(begin, end) -> float:
        return begin.elapsed_time(end)

    def synchronize(self) -> None:
        self._torch.cuda.synchronize()

    def flush(self) -> None:
        if self._flush is None:
            return
        with self._torch.cuda.stream(self._stream):
            if self._read_flush:           # reads only: the L2 is left holding clean lines
                self._torch.amax(self._flush, dim=0, out=self._sink)
            else:
                self._flush.zero_()

    def spin(self, us: float) -> None:
        with self._torch.cuda.stream(self._stream):
            self._torch.cuda._sleep(int(us * SPIN_CYCLES_PER_US))


def _check_args(warmup_ms, rep_ms, reps, spin_us, args, flush_l2=True) -> None:
    if warmup_ms < 0:
        raise ValueError(f"warmup_ms must be >= 0, got {warmup_ms}")
    if rep_ms <= 0:
        raise ValueError(f"rep_ms must be > 0, got {rep_ms}")
    if reps is not None and reps < 1:
        raise ValueError(f"reps must be >= 1, got {reps}")
    if spin_us < 0:
        raise ValueError(f"spin_us must be >= 0, got {spin_us}")
    if args is not None and (len(args) == 0 or not all(isinstance(a, tuple) for a in args)):
        raise ValueError("args must be a non-empty list of argument tuples, one per input set")
    if flush_l2 not in FLUSHES:
        raise ValueError(f"flush_l2 must be one of {FLUSHES}, got {flush_l2!r}")


def _bench(fn, clock, *, warmup_ms: float, rep_ms: float, reps: int | None, spin_us: float,
           args: Sequence[tuple] | None) -> Timing:
    """The timing loop on any clock (mark/elapsed_ms/synchronize/flush/spin)."""
    counter = itertools.count()

    def call():
        i = next(counter)
        if args is None:
            fn()
        else:
            fn(*args[i % len(args)])

    call()                                   # compiles, loads, autotunes: not timed
    clock.synchronize()
    begin = clock.mark()
    for _ in range(5):
        call()
    end = clock.mark()
    clock.synchronize()
    per_call = max(clock.elapsed_ms(begin, end) / 5, 1e-3)
    for _ in range(max(1, int(warmup_ms / per_call))):
        call()
    count = reps if reps is not None else max(5, int(rep_ms / per_call))
    marks = []
    for _ in range(count):
        clock.flush()
        if spin_us:
            clock.spin(spin_us)
        begin = clock.mark()
        call()
        marks.append((begin, clock.mark()))
    clock.synchronize()
    return Timing(tuple(clock.elapsed_ms(b, e) for b, e in marks))


def do_bench(fn: Callable[..., object], *, warmup_ms: float = 25.0, rep_ms: float = 100.0,
             flush_l2: bool | str = True, stream=None, args: Sequence[tuple] | None = None,
             reps: int | None = None, spin_us: float = 0.0, stats: bool = False):
    """Median milliseconds of `fn()` on the GPU, measured with CUDA events around each call after
    about `warmup_ms` of warm-up calls, for about `rep_ms`; with `flush_l2`, a 256 MiB buffer is
    overwritten (True, "write") or read ("read": the L2 is left with clean lines, so the
    flush's own write-back does not fall inside the timed call) before each timed call, so that
    no call is served by the previous one's L2. Needs torch with CUDA.

    args: input sets to rotate through: call i is `fn(*args[i % len(args)])` (warm-up calls
      included), so repeated calls do not reuse one set's data; without, `fn()`.
    reps: exactly this many timed calls instead of about `rep_ms` worth.
    spin_us: queue each timed call behind a GPU spin of about this many microseconds, so the
      GPU is still busy while the host queues the start event, the call and the end event: the
      events then time the GPU work only, not the host's launch overhead.
    stats: return the `Timing` of every timed call instead of its median.
    """
    _check_args(warmup_ms, rep_ms, reps, spin_us, args, flush_l2)
    timing = _bench(fn, _CudaClock(stream, flush_l2), warmup_ms=warmup_ms, rep_ms=rep_ms,
                    reps=reps, spin_us=spin_us, args=args)
    return timing if stats else timing.median


def do_bench_blocks(fns: Sequence[Callable[..., object]], *, blocks: int = 2,
                    reps: int | None = None, **options) -> list[list[Timing]]:
    """`do_bench` of each of `fns` in turn, `blocks` times over (f0, f1, .., f0, f1, ..), each
    block with its own warm-up; `reps` timed calls in all per function, split across the
    blocks. Returns each function's Timings, one per block (for the spread between blocks).
    The other options are do_bench's, the same for every function."""
    if blocks < 1:
        raise ValueError(f"blocks must be >= 1, got {blocks}")
    per_block = None if reps is None else max(1, reps // blocks)
    runs: list[list[Timing]] = [[] for _ in fns]
    for _ in range(blocks):
        for fn, out in zip(fns, runs):
            out.append(do_bench(fn, reps=per_block, stats=True, **options))
    return runs


def do_bench_alternating(fns: Sequence[Callable[..., object]], *, blocks: int = 2,
                         reps: int | None = None, **options) -> list[Timing]:
    """do_bench_blocks, each function's blocks merged into one Timing."""
    return [Timing.merge(r) for r in do_bench_blocks(fns, blocks=blocks, reps=reps, **options)]

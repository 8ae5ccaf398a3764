"""The interpreter's synchronisation objects (mbarriers, named barriers) and the waits a group
of threads blocks in until the scheduler (tilemlir.reference.machine) finds them satisfied.

Each object also carries the vector clocks of the race detector (tilemlir.reference.races)
when it runs: what the arriving warps release, and what a completed phase or generation gives
the warps that wait for it.
"""

from __future__ import annotations

import numpy as np

from tilemlir.reference.memory import InterpretError


class Mbarrier:
    """An mbarrier: the arrivals its phase expects, those and the transaction bytes still
    pending, how many phases completed since its init (the parity a wait compares with), and
    for the race detector its agent column, whose clock counts every phase it ever completed."""

    def __init__(self, count: int, where: str, clocks=None, agent: int = -1, clock: int = 0):
        self.count = count
        self.pending = count
        self.tx = 0
        self.completed = 0
        self.where = where
        self.clocks, self.agent, self.clock = clocks, agent, clock
        self.acc = None                          # released by this phase's arrivals so far
        self.released = None                     # what waiting for the last phase acquires

    @property
    def landing(self) -> int:
        """The clock at which bytes that complete now become visible (the current phase's)."""
        return self.clock + 1

    def arrive(self, warp: int) -> None:
        if self.clocks is not None:
            self.acc = self.clocks.release(self.acc, [warp])
        self.pending -= 1
        if self.pending < 0:
            raise InterpretError(f"more arrivals on {self.where} than its count {self.count}")
        self._settle()

    def expect(self, nbytes: int) -> None:
        self.tx += nbytes

    def complete_tx(self, nbytes: int, issuer_warp: int) -> None:
        """An async copy's bytes landed; it was issued by `issuer_warp`, after whose earlier
        work it is ordered."""
        if self.clocks is not None:
            self.acc = self.clocks.release(self.acc, [issuer_warp])
        self.tx -= nbytes
        self._settle()

    def _settle(self) -> None:
        if self.pending == 0 and self.tx == 0:
            self.completed += 1
            self.clock += 1
            self.pending = self.count
            if self.clocks is not None:
                released = np.maximum(self.clocks.fit(self.released), self.clocks.fit(self.acc))
                released[self.agent] = self.clock
                self.released, self.acc = released, None

    def state(self) -> str:
        return (f"still expects {self.pending} of {self.count} arrivals and {self.tx} "
                f"transaction bytes")


class NamedBarrier:
    """bar.sync / bar.arrive / bar.red on one barrier id of a CTA (or barrier.cluster of a
    cluster): threads arrive until the generation's count is reached, which completes it."""

    def __init__(self, name: str, clocks=None):
        self.name = name
        self.clocks = clocks
        self.expected: int | None = None
        self.arrived = 0
        self.generation = 0
        self.acc = None
        self.any = False
        self.released: dict[int, np.ndarray | None] = {}
        self.results: dict[int, bool] = {}

    def arrive(self, threads: np.ndarray, expected: int, warps: np.ndarray,
               preds: np.ndarray | None = None) -> np.ndarray:
        """Arrivals of `threads` (in order; `warps` theirs) for a barrier of `expected`
        threads; the generation each thread arrived in. Arrivals past the count start the
        next generation, as on the GPU."""
        generations = np.empty(len(threads), np.int64)
        i = 0
        while i < len(threads):
            if self.expected is None:
                self.expected = expected
            elif self.expected != expected:
                raise InterpretError(f"{self.name} is used for {self.expected} threads and for "
                                     f"{expected} threads in one phase")
            take = min(self.expected - self.arrived, len(threads) - i)
            generations[i:i + take] = self.generation
            if self.clocks is not None:
                self.acc = self.clocks.release(self.acc, np.unique(warps[i:i + take]))
            if preds is not None:
                self.any = self.any or bool(preds[i:i + take].any())
            self.arrived += take
            i += take
            if self.arrived == self.expected:
                self.released[self.generation] = self.acc
                self.results[self.generation] = self.any
                self.generation += 1
                self.expected, self.arrived, self.acc, self.any = None, 0, None, False
        return generations

    def state(self) -> str:
        return f"{self.arrived} of {self.expected} threads arrived"


class Wait:
    """What a group of threads blocks in; `op` is where (for the deadlock report)."""
    op = None

    def ready(self, machine) -> np.ndarray:
        raise NotImplementedError

    def finish(self, machine, mask: np.ndarray) -> None:
        """The threads in `mask` go on: they acquire what they waited for."""

    def describe(self, machine, mask: np.ndarray) -> str:
        raise NotImplementedError


class RegisterWait(Wait):
    """setmaxnreg.inc: the warps of `mask` wait until the CTA's register pool (what other
    warps' setmaxnreg.dec gave back) holds the registers that raising them to `count` per
    thread takes; the CTA's registers are those it got at launch, no more."""

    def __init__(self, op, cta, mask: np.ndarray, count: int):
        self.op, self.cta, self.mask, self.count = op, cta, mask.copy(), count
        self.warps = np.unique(np.flatnonzero(mask) // 32)

    def need(self) -> int:
        return int(np.maximum(self.count - self.cta.registers[self.warps], 0).sum()) * 32

    def ready(self, machine):
        return self.mask if self.cta.register_pool >= self.need() else \
            np.zeros(machine.threads, bool)

    def finish(self, machine, mask):
        self.cta.register_pool -= self.need()
        self.cta.registers[self.warps] = np.maximum(self.cta.registers[self.warps], self.count)

    def describe(self, machine, mask):
        cta = self.cta
        return (f"setmaxnreg.inc to {self.count} registers per thread, which takes "
                f"{self.need()} more registers than these warps hold; the CTA's pool holds "
                f"{cta.register_pool} (the CTA got {cta.launch_registers} per thread at launch, "
                f"{cta.launch_registers * machine.threads} in all)")


class MbarrierWait(Wait):
    """mbarrier.try_wait.parity: per group of threads, a barrier and a parity."""

    def __init__(self, op, entries: list[tuple[np.ndarray, Mbarrier, int]]):
        self.op, self.entries = op, entries

    def ready(self, machine):
        ready = np.zeros(machine.threads, bool)
        for mask, barrier, parity in self.entries:
            if barrier.completed % 2 != parity:
                ready |= mask
        return ready

    def finish(self, machine, mask):
        clocks = machine.clocks
        if clocks is None:
            return
        for threads, barrier, _ in self.entries:
            both = threads & mask
            if both.any():
                clocks.acquire(machine.warps_of(np.flatnonzero(both)), barrier.released)

    def describe(self, machine, mask):
        parts = []
        for threads, barrier, parity in self.entries:
            if (threads & mask).any():
                parts.append(f"wait for the phase of parity {parity} of {barrier.where}, which "
                             f"{barrier.state()}")
        return "; ".join(parts)


class BarrierWait(Wait):
    """bar.sync / bar.red / barrier.cluster: per group of threads, a named barrier and the
    generation each thread arrived in; `result` the value bar.red gives."""

    def __init__(self, op, entries: list[tuple[np.ndarray, NamedBarrier, np.ndarray]],
                 result=None):
        self.op, self.entries, self.result = op, entries, result

    def ready(self, machine):
        ready = np.zeros(machine.threads, bool)
        for mask, barrier, generations in self.entries:
            ready |= mask & (generations < barrier.generation)
        return ready

    def finish(self, machine, mask):
        values = np.zeros(machine.threads, bool)
        for threads, barrier, generations in self.entries:
            both = threads & mask
            for generation in np.unique(generations[both]).tolist():
                mine = both & (generations == generation)
                if machine.clocks is not None:
                    machine.clocks.acquire(machine.warps_of(np.flatnonzero(mine)),
                                           barrier.released[generation])
                values[mine] = barrier.results[generation]
        if self.result is not None:
            machine.set_value(self.result, values, mask)

    def describe(self, machine, mask):
        return "; ".join(f"wait in {barrier.name} ({barrier.state()})"
                         for threads, barrier, _ in self.entries if (threads & mask).any())


class Collective(Wait):
    """A primitive of warp, warpgroup or CTA scope reached by only some threads of its scope:
    they wait there for the others (the scheduler merges them once all are there)."""

    def __init__(self, op, scope: str, size: int):
        self.op, self.scope, self.size = op, scope, size

    def ready(self, machine):
        return np.zeros(machine.threads, bool)

    def describe(self, machine, mask):
        size = min(self.size, machine.threads)
        first = int(np.flatnonzero(mask)[0]) // size * size
        reached = int(mask[first:first + size].sum())
        return (f"a {self.scope}-scope {self.op.name} reached by {reached} of the {size} "
                f"threads of its {self.scope}: the cooperative primitive needs all of them")

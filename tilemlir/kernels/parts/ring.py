"""The stage ring: shared-memory stages handed between a TMA producer and its consumers by two
mbarriers per stage, and the kernel's other mbarriers.

    full[s]    the producer arms it with the stage's byte count (arrive_expect_tx) before its
               TMA loads; the loads complete it. Consumers wait on it.
    empty[s]   each consumer warpgroup arrives once it has read the stage; the producer waits
               on it before refilling the stage.

Iteration `it` (counted over everything that goes through the ring, across tiles) uses stage
it % STAGES in lap it // STAGES; the parity of a barrier's phase alternates per lap. A fresh
barrier's preceding phase (parity 1) counts as complete, so the producer's first lap of waits
on `empty` passes at once: it waits for parity (lap + 1) % 2, the consumers for lap % 2.

Cluster form (peer=...): a stage of each CTA of a 2-CTA cluster is written by both producers
(TMA multicast), so it is free only when the consumers of both CTAs have read it: every
consumer arrives on its own CTA's `empty` and, through mapa, on the peer's, which counts
2 x consumers arrivals. `handoff` is the scope of that hand-off: "cta" (as CUTLASS's cluster
barriers: what it orders is wgmma's reads of the stage, completed by wait_group before the
arrive, not writes the peer must see) or "cluster" (release / acquire at cluster scope; ptxas
then puts a MEMBAR.GPU before each such arrive).

Producer-warpgroup form (producers=128): a producer without TMA (cp.async, whose copies
complete in the issuing threads) has every thread of its warpgroup arrive on `full` once its
own copies into the stage are complete and fenced for the async proxy (fill_stage).

`producer_tail` is CUTLASS's PipelineTmaAsync.producer_tail: the producer waits out the
consumers' last releases before it exits. The kernels here end with a cluster_sync where a
peer may still arrive (which covers it), so none calls it.
"""

from __future__ import annotations

import tilemlir.lang as T


class StageRing:
    """`stages` stages' full and empty mbarriers (see the module docstring); made by
    Barriers.ring / Barriers.rings, which allocate and initialise them."""

    def __init__(self, full, empty, stages: int, consumers: int, peer=None,
                 handoff: str = "cta", producers: int = 1):
        self.full, self.empty = full, empty
        self.stages = stages
        self.peer = peer
        self.handoff = handoff
        # arrivals that free a stage: each consumer's, and in the cluster form the peer's too
        self.arrivals = consumers if peer is None else 2 * consumers
        # arrivals that fill one: the TMA issuer's (its loads' bytes complete the phase), or
        # each thread of a producer warpgroup's (fill_stage)
        self.producers = producers

    # Stage and phase of iteration `it` (no arithmetic for a one-stage ring).
    def stage(self, it):
        return 0 if self.stages == 1 else it % self.stages

    def lap(self, it):
        return it if self.stages == 1 else it // self.stages

    def free_phase(self, it):
        """The parity of `empty`'s phase the producer waits for before iteration it."""
        return (self.lap(it) + 1) % 2

    def full_phase(self, it):
        """The parity of `full`'s phase the consumers wait for in iteration it."""
        return self.lap(it) % 2

    @T.macro
    def acquire(self, it, nbytes):
        """Producer: waits until iteration it's stage is free, then arms its full barrier with
        the `nbytes` the loads will bring; returns the stage (for the loads' barrier)."""
        s = self.stage(it)
        T.ptx.mbarrier.try_wait(self.empty.ptr_to([s]), self.free_phase(it), scope=self.handoff)
        T.ptx.mbarrier.arrive_expect_tx(self.full.ptr_to([s]), nbytes)
        return s

    @T.macro
    def wait_free(self, it):
        """Producer (every thread of a producer warpgroup): waits until iteration it's stage is
        free; returns the stage."""
        s = self.stage(it)
        T.ptx.mbarrier.try_wait(self.empty.ptr_to([s]), self.free_phase(it), scope=self.handoff)
        return s

    @T.macro
    def fill_stage(self, it):
        """Producer warpgroup, once this thread's cp.async copies of iteration it are complete
        (cp_async wait_group): its generic-proxy writes are fenced for the consumers' wgmma
        (async proxy) and it arrives on the stage's full barrier; the consumers' wait passes
        when every producer thread has arrived."""
        T.ptx.fence.proxy_async("shared::cta")
        T.ptx.mbarrier.arrive(self.full.ptr_to([self.stage(it)]))

    @T.macro
    def acquire_stage(self, s, phase, nbytes):
        """acquire, for rings that share one stage index and phase (K and V of attention)."""
        T.ptx.mbarrier.try_wait(self.empty.ptr_to([s]), phase, scope=self.handoff)
        T.ptx.mbarrier.arrive_expect_tx(self.full.ptr_to([s]), nbytes)

    @T.macro
    def wait(self, it):
        """Consumer: waits until iteration it's stage has landed; returns the stage."""
        s = self.stage(it)
        T.ptx.mbarrier.try_wait(self.full.ptr_to([s]), self.full_phase(it))
        return s

    @T.macro
    def release(self, s):
        """Consumer (one thread per warpgroup): stage s is read; in the cluster form, in the
        peer CTA too."""
        T.ptx.mbarrier.arrive(self.empty.ptr_to([s]))
        if self.peer is not None:
            T.ptx.mbarrier.arrive(T.cuda.mapa(self.empty.ptr_to([s]), self.peer),
                                  scope=self.handoff)

    @T.macro
    def producer_tail(self, it):
        """Producer, after its last iteration (it: the next one): waits until the consumers
        have freed every stage, so that no arrival on this CTA's barriers is still in flight
        when it exits."""
        for i in T.unroll(self.stages):
            s = self.stage(it + i)
            T.ptx.mbarrier.try_wait(self.empty.ptr_to([s]), self.free_phase(it + i),
                                    scope=self.handoff)


class Barriers:
    """A kernel's mbarriers: allocated from its shared-memory pool in the order asked for, and
    initialised together by one thread (`init`), before anyone waits or arrives."""

    def __init__(self, pool):
        self.pool = pool
        self._groups = []               # (init macro, its argument), in initialisation order

    def _alloc(self, count: int):
        return self.pool.alloc((count,), "uint64", align=8)

    def rings(self, n: int, stages: int, consumers: int, peer=None,
              handoff: str = "cta", producers: int = 1) -> list[StageRing]:
        """n rings that share their stage count and are filled and drained in step (K and V):
        every ring's full barriers, then every ring's empty barriers."""
        fulls = [self._alloc(stages) for _ in range(n)]
        empties = [self._alloc(stages) for _ in range(n)]
        rings = [StageRing(f, e, stages, consumers, peer, handoff, producers)
                 for f, e in zip(fulls, empties)]
        self._groups.append((_init_rings, rings))
        return rings

    def ring(self, stages: int, consumers: int, peer=None, handoff: str = "cta",
             producers: int = 1) -> StageRing:
        """A StageRing of `stages` stages freed by `consumers` warpgroups (and, with `peer`,
        by the peer CTA's), filled by one TMA issuer or `producers` threads (fill_stage)."""
        return self.rings(1, stages, consumers, peer, handoff, producers)[0]

    def alloc(self, count: int, arrivals: int = 1):
        """`count` more mbarriers, each completing a phase after `arrivals` arrivals."""
        barriers = self._alloc(count)
        self._groups.append((_init_each, (barriers, count, arrivals)))
        return barriers

    @T.macro
    def init(self, wg, warp, lane, cluster=False):
        """One thread initialises every barrier; then the CTA (or with cluster=True the cluster:
        the peer's barriers exist before anyone signals them) synchronises."""
        if wg == 0:
            if warp == 0:
                if lane == 0:
                    for init, what in self._groups:
                        init(what)
        T.ptx.fence.mbarrier_init()
        if cluster:
            T.cuda.cluster_sync()
        else:
            T.cuda.cta_sync()


@T.macro
def _init_rings(rings):
    for s in T.unroll(rings[0].stages):
        for ring in rings:
            T.ptx.mbarrier.init(ring.full.ptr_to([s]), ring.producers)
        for ring in rings:
            T.ptx.mbarrier.init(ring.empty.ptr_to([s]), ring.arrivals)


@T.macro
def _init_each(what):
    barriers, count, arrivals = what
    for i in T.unroll(count):
        T.ptx.mbarrier.init(barriers.ptr_to([i]), arrivals)

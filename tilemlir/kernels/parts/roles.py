"""Who does what: the warpgroups of a warp-specialized CTA, and a CTA's place in a 2x1 cluster.

Warp specialization: warpgroup 0 produces (one elected thread of its warp 0 issues the TMA
loads; the warpgroup's register budget is lowered with setmaxnreg), the other warpgroups
consume (their budget raised). A warpgroup's .inc waits until registers are free, so the
budgets must fit the register file (checks.consumer_regs).
"""

from __future__ import annotations

import tilemlir.lang as T


@T.macro
def warp_specialized(wg, warp, producer_regs, consumer_regs, producer, consumer,
                     whole_warpgroup=False):
    """Runs the hook `producer` in the producer thread (with whole_warpgroup, in every thread
    of warpgroup 0: a cp.async producer) and `consumer` in every thread of warpgroups 1 and up
    (hooks: functions defined in the kernel, run in its frame)."""
    if wg == 0:
        T.ptx.setmaxnreg(producer_regs, increase=False)
        if whole_warpgroup:
            producer()
        elif warp == 0:
            if T.ptx.elect_sync():
                producer()
    else:
        T.ptx.setmaxnreg(consumer_regs, increase=True)
        consumer()


class ClusterPair:
    """The CTAs launched in 2x1 clusters, seen from one of them (CTA `pid` of the grid): its
    rank in the cluster (0 or 1), its peer's rank, and the cluster's index (a persistent
    scheduler's worker)."""

    def __init__(self, pid):
        T.cluster_shape([2, 1, 1])
        self.rank = T.cuda.cluster_ctarank()
        self.peer = self.rank ^ 1
        self.cluster = pid // 2

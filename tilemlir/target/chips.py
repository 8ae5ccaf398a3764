"""NVIDIA targets: a chip, the PTX version it is compiled with, and what it can execute.

Every lowering asks `Target.supports(feature)` before emitting an instruction: the LLVM in the
MLIR wheels is built with assertions, and an instruction the chip lacks aborts the process
instead of raising an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The PTX ISA version each chip needs at least (ptxas and LLVM's NVPTX backend both check it).
_MIN_PTX = {75: 70, 80: 78, 86: 78, 89: 78, 90: 80, 100: 86, 101: 86, 103: 88, 120: 87}

# feature -> (predicate on the target, what it is, for messages)
_FEATURES = {
    "mma_sync_f16": (lambda t: t.sm >= 80, "mma.sync m16n8k16/m16n8k8 with f16/bf16 inputs"),
    "ldmatrix": (lambda t: t.sm >= 75, "ldmatrix"),
    "stmatrix": (lambda t: t.sm >= 90, "stmatrix"),
    "cp_async": (lambda t: t.sm >= 80, "cp.async"),
    "mbarrier": (lambda t: t.sm >= 80, "mbarrier"),
    "mbarrier_try_wait": (lambda t: t.sm >= 90, "mbarrier.try_wait"),
    "elect_sync": (lambda t: t.sm >= 90, "elect.sync"),
    "fence_proxy_async": (lambda t: t.sm >= 90, "fence.proxy.async"),
    "tma": (lambda t: t.sm >= 90, "cp.async.bulk.tensor (TMA)"),
    "clusters": (lambda t: t.sm >= 90, "thread-block clusters"),
    "setmaxnreg": (lambda t: t.arch_specific and t.sm in (90, 100, 101, 103), "setmaxnreg"),
    "wgmma": (lambda t: t.chip == "sm_90a", "wgmma.mma_async"),
    "tcgen05": (lambda t: t.arch_specific and t.sm in (100, 101, 103), "tcgen05 (tensor memory)"),
}


# NVVM ops (by name prefix, longest first) and the feature each needs. Checked on the final IR
# before LLVM sees it, as a last guard for hand-written nvvm ops.
NVVM_REQUIREMENTS = (
    ("nvvm.mbarrier.try_wait", "mbarrier_try_wait"),
    ("nvvm.mbarrier.arrive.expect_tx", "mbarrier_try_wait"),
    ("nvvm.cp.async.bulk", "tma"),
    ("nvvm.cp.async.mbarrier", "cp_async"),
    ("nvvm.cp.async", "cp_async"),
    ("nvvm.mbarrier", "mbarrier"),
    ("nvvm.elect.sync", "elect_sync"),
    ("nvvm.fence.proxy", "fence_proxy_async"),
    ("nvvm.fence.mbarrier", "fence_proxy_async"),
    ("nvvm.stmatrix", "stmatrix"),
    ("nvvm.ldmatrix", "ldmatrix"),
    ("nvvm.mma.sync", "mma_sync_f16"),
    ("nvvm.wgmma", "wgmma"),
    ("nvvm.tcgen05", "tcgen05"),
    ("nvvm.setmaxregister", "setmaxnreg"),
    ("nvvm.cluster", "clusters"),
)


def nvvm_requirement(op_name: str) -> str | None:
    """The feature an nvvm op needs, or None when it runs everywhere we target."""
    for prefix, feature in NVVM_REQUIREMENTS:
        if op_name.startswith(prefix):
            return feature
    return None


class TargetError(ValueError):
    pass


@dataclass(frozen=True)
class Target:
    """An NVIDIA chip such as sm_80, sm_90a or sm_100a, with the PTX version to emit."""
    chip: str
    ptx: int

    @staticmethod
    def parse(chip: str, ptx: int | None = None) -> "Target":
        m = re.fullmatch(r"sm_(\d+)(a?)", chip)
        if m is None:
            raise TargetError(f"unknown chip '{chip}': expected sm_NN or sm_NNa (e.g. sm_80, sm_90a)")
        sm = int(m.group(1))
        floor = _MIN_PTX.get(sm)
        if floor is None:
            raise TargetError(f"unsupported chip '{chip}': known are "
                              + ", ".join(f"sm_{s}" for s in sorted(_MIN_PTX)))
        if ptx is None:
            ptx = floor
        elif ptx < floor:
            raise TargetError(f"{chip} needs PTX ISA {floor // 10}.{floor % 10} or newer, got "
                              f"{ptx // 10}.{ptx % 10}")
        return Target(chip, ptx)

    @property
    def sm(self) -> int:
        return int(re.match(r"sm_(\d+)", self.chip).group(1))

    @property
    def arch_specific(self) -> bool:
        return self.chip.endswith("a")

    @property
    def features(self) -> str:
        """The `cubin-features` string of the upstream NVVM pipeline."""
        return f"+ptx{self.ptx}"

    def supports(self, feature: str) -> bool:
        return _FEATURES[feature][0](self)

    def require(self, feature: str) -> str | None:
        """None when supported, else the reason it is not (for dispatch diagnostics)."""
        if self.supports(feature):
            return None
        return f"{_FEATURES[feature][1]} is not available on {self.chip}"

    def __str__(self) -> str:
        return self.chip


DEFAULT_CHIP = "sm_90a"

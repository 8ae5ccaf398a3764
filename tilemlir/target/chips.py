"""NVIDIA targets: a chip, the PTX version it is compiled with, and what it can execute.

Every lowering asks `Target.supports(feature)` before emitting an instruction: the LLVM in the
MLIR wheels is built with assertions, and an instruction the chip lacks aborts the process
instead of raising an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

# The PTX ISA version each chip needs at least (ptxas and LLVM's NVPTX backend both check it).
_MIN_PTX = {75: 70, 80: 78, 86: 78, 89: 78, 90: 80, 100: 86, 101: 86, 103: 88, 120: 87}

# The PTX ISA versions LLVM's NVPTX backend (LLVM 22) can emit; any other `+ptxNN` is silently
# replaced by LLVM, so it is rejected here.
KNOWN_PTX = (60, 61, 62, 63, 64, 65, 70, 71, 72, 73, 74, 75, 76, 77, 78, 80, 81, 82, 83, 84, 85,
             86, 87, 88, 90)

# Shared memory a block can use (bytes, dynamic allocation opted in), by SM version.
_SHARED_BYTES = {75: 64 * 1024, 80: 163 * 1024, 86: 99 * 1024, 89: 99 * 1024, 90: 227 * 1024,
                 100: 227 * 1024, 101: 227 * 1024, 103: 227 * 1024, 120: 99 * 1024}

_BLACKWELL_DC = (100, 101, 103)
_ARCH_SPECIFIC = (90, 100, 101, 103, 120)


@dataclass(frozen=True)
class Feature:
    available: Callable[["Target"], bool]
    description: str
    min_ptx: int = 0                     # beyond the chip's own floor


def _sm(n):
    return lambda t: t.sm >= n


# Every feature a lowering or an nvvm op can need. Conservative where an op has variants with
# different needs (the most demanding variant decides): a rejection is a diagnostic, a miss is
# an LLVM abort.
_FEATURES = {
    "everywhere": Feature(lambda t: True, "any supported chip"),
    "mma_sync_f16": Feature(_sm(80), "mma.sync m16n8k16/m16n8k8 with f16/bf16 inputs"),
    "mma_sparse": Feature(_sm(89), "sparse mma.sp.sync (every element type)", 84),
    "mma_block_scale": Feature(lambda t: t.arch_specific and t.sm == 120,
                               "block-scaled mma.sync", 87),
    "wmma": Feature(_sm(80), "wmma (every element type)"),
    "ldmatrix": Feature(_sm(75), "ldmatrix"),
    "stmatrix": Feature(_sm(90), "stmatrix"),
    "cp_async": Feature(_sm(80), "cp.async"),
    "packed_f32_convert": Feature(_sm(80), "cvt.rn/rz of two f32 to f16x2/bf16x2"),
    "mma_fp8": Feature(_sm(89), "mma.sync with f8 (e4m3/e5m2) inputs", 84),
    "matrix_b8": Feature(lambda t: t.arch_specific and t.sm in _BLACKWELL_DC,
                         "ldmatrix/stmatrix of 8-bit elements", 86),
    "mbarrier": Feature(_sm(80), "mbarrier"),
    "mbarrier_try_wait": Feature(_sm(90), "mbarrier.try_wait"),
    "mbarrier_tx": Feature(_sm(90), "mbarrier transaction counts (expect_tx, complete_tx)", 80),
    "elect_sync": Feature(_sm(90), "elect.sync"),
    "fence_proxy_async": Feature(_sm(90), "fence.proxy.async"),
    "fence_cluster": Feature(_sm(90), "cluster-scope fences", 80),
    "fence_tensormap": Feature(_sm(90), "fence.proxy.tensormap acquire/release", 83),
    "fence_sync_restrict": Feature(_sm(90), "fence .sync_restrict", 86),
    "tma": Feature(_sm(90), "cp.async.bulk.tensor (TMA)"),
    "bulk_store": Feature(_sm(100), "st.bulk", 86),
    "clusters": Feature(_sm(90), "thread-block clusters"),
    "cluster_shared_size": Feature(_sm(90), "%aggr_smem_size", 81),
    "cluster_launch_control": Feature(_sm(100), "clusterlaunchcontrol", 86),
    "griddepcontrol": Feature(_sm(90), "griddepcontrol"),
    "match_sync": Feature(_sm(75), "match.sync"),
    "redux_sync": Feature(lambda t: t.arch_specific and t.sm in _BLACKWELL_DC,
                          "redux.sync (with its f32 forms)", 86),
    "nanosleep": Feature(_sm(75), "nanosleep"),
    # ptxas: "cvt with .e4m3x2/.e5m2x2 on sm_89 requires PTX ISA .version 8.1"; sm_90's own
    # floor (8.0) is enough there
    "fp8_convert": Feature(lambda t: t.sm >= 90 or t.sm == 89 and t.ptx >= 81,
                           "f8 (e4m3/e5m2) conversions (sm_90+, or sm_89 with PTX ISA 8.1)"),
    "tf32_convert": Feature(lambda t: t.arch_specific and t.sm in _BLACKWELL_DC,
                            "cvt to tf32 (with its relu/satfinite forms)", 86),
    "narrow_float_convert": Feature(lambda t: t.arch_specific and t.sm in _BLACKWELL_DC,
                                    "f4/f6/ue8m0 and stochastic-rounding conversions", 87),
    "setmaxnreg": Feature(lambda t: t.arch_specific and t.sm in (90,) + _BLACKWELL_DC,
                          "setmaxnreg"),
    "wgmma": Feature(lambda t: t.chip == "sm_90a", "wgmma.mma_async"),
    "tcgen05": Feature(lambda t: t.arch_specific and t.sm in _BLACKWELL_DC,
                       "tcgen05 (tensor memory)", 86),
}


# nvvm ops, and the nvgpu ops the pipeline turns into nvvm ops, by name prefix (longest match
# wins) -> the feature each needs. The table covers every op of both dialects the installed
# bindings define (a test enumerates them), and check-target rejects one it does not know: the
# last guard before LLVM, whose NVPTX backend aborts on what a chip lacks.
NVVM_REQUIREMENTS = {
    "nvvm.bar.warp.sync": "everywhere",
    "nvvm.barrier": "everywhere",
    "nvvm.barrier0": "everywhere",
    "nvvm.breakpoint": "everywhere",
    "nvvm.exit": "everywhere",
    "nvvm.inline_ptx": "everywhere",     # ptxas, not LLVM, judges inline PTX
    "nvvm.memory.barrier": "everywhere",
    "nvvm.pmevent": "everywhere",
    "nvvm.prmt": "everywhere",
    "nvvm.rcp.approx.ftz.f": "everywhere",
    "nvvm.shfl.sync": "everywhere",
    "nvvm.vote.sync": "everywhere",
    "nvvm.dot.accumulate": "everywhere",
    "nvvm.read.ptx.sreg": "everywhere",
    "nvvm.read.ptx.sreg.cluster": "clusters",
    "nvvm.read.ptx.sreg.clusterid": "clusters",
    "nvvm.read.ptx.sreg.nclusterid": "clusters",
    "nvvm.read.ptx.sreg.aggr.smem.size": "cluster_shared_size",
    "nvvm.prefetch": "tma",              # its tensormap form needs sm_90
    "nvvm.nanosleep": "nanosleep",
    "nvvm.match.sync": "match_sync",
    "nvvm.redux.sync": "redux_sync",
    "nvvm.griddepcontrol": "griddepcontrol",
    "nvvm.cluster": "clusters",
    "nvvm.mapa": "clusters",
    "nvvm.clusterlaunchcontrol": "cluster_launch_control",
    "nvvm.convert": "narrow_float_convert",
    "nvvm.convert.f16x2.to.f8x2": "fp8_convert",
    "nvvm.convert.f8x2.to.f16x2": "fp8_convert",
    "nvvm.convert.float.to.tf32": "tf32_convert",
    "nvvm.cp.async": "cp_async",
    "nvvm.cp.async.bulk": "tma",
    "nvvm.mbarrier": "mbarrier",
    "nvvm.mbarrier.try_wait": "mbarrier_try_wait",
    "nvvm.mbarrier.arrive.expect_tx": "mbarrier_tx",
    "nvvm.mbarrier.arrive_drop.expect_tx": "mbarrier_tx",
    "nvvm.mbarrier.expect_tx": "mbarrier_tx",
    "nvvm.mbarrier.complete_tx": "mbarrier_tx",
    "nvvm.elect.sync": "elect_sync",
    "nvvm.fence.proxy": "fence_proxy_async",
    "nvvm.fence.proxy.acquire": "fence_tensormap",
    "nvvm.fence.proxy.release": "fence_tensormap",
    "nvvm.fence.proxy.sync_restrict": "fence_sync_restrict",
    "nvvm.fence.sync_restrict": "fence_sync_restrict",
    "nvvm.fence.mbarrier": "fence_cluster",
    "nvvm.fence.sc.cluster": "fence_cluster",
    "nvvm.st.bulk": "bulk_store",
    "nvvm.stmatrix": "stmatrix",
    "nvvm.ldmatrix": "ldmatrix",
    "nvvm.mma.sync": "mma_sync_f16",
    "nvvm.mma.sp": "mma_sparse",
    "nvvm.mma.block_scale": "mma_block_scale",
    "nvvm.mma.sp.block_scale": "mma_block_scale",
    "nvvm.wmma": "wmma",
    "nvvm.wgmma": "wgmma",
    "nvvm.tcgen05": "tcgen05",
    "nvvm.setmaxregister": "setmaxnreg",
    "nvgpu.rcp": "everywhere",
    "nvgpu.mbarrier": "mbarrier",
    "nvgpu.mbarrier.create": "everywhere",   # a shared-memory global, no instruction
    "nvgpu.mbarrier.get": "everywhere",
    "nvgpu.mbarrier.arrive.expect_tx": "mbarrier_tx",
    "nvgpu.mbarrier.try_wait": "mbarrier_try_wait",
    "nvgpu.device_async_copy": "cp_async",
    "nvgpu.device_async_create_group": "cp_async",
    "nvgpu.device_async_wait": "cp_async",
    "nvgpu.ldmatrix": "ldmatrix",
    "nvgpu.mma.sync": "mma_sync_f16",
    "nvgpu.mma.sp": "mma_sparse",
    "nvgpu.tma": "tma",
    "nvgpu.warpgroup": "wgmma",
}


# Variants of one op with different needs, told apart by the op's attributes: (op-name prefix,
# pattern on the attributes' text, feature); the first match overrides the name table.
NVVM_VARIANTS = (
    ("nvvm.convert.f32x2.to.f16x2", r"fp_rnd_mode<(rn|rz)>", "packed_f32_convert"),
    ("nvvm.convert.f32x2.to.bf16x2", r"fp_rnd_mode<(rn|rz)>", "packed_f32_convert"),
    ("nvvm.convert.f32x2.to.f8x2", r"dstTy = f8E(4M3FN|5M2)\b", "fp8_convert"),
    ("nvvm.mma.sync", r"mma_type<e[45]m[23]>", "mma_fp8"),
    ("nvvm.ldmatrix", r"elt_type<b8", "matrix_b8"),
    ("nvvm.stmatrix", r"elt_type<b8", "matrix_b8"),
)


def nvvm_requirement(op_name: str, attributes: str = "") -> str | None:
    """The feature an nvvm op needs (`attributes`: the op's attributes as text, to tell its
    variants apart): the entry of its longest dotted prefix in NVVM_REQUIREMENTS, or None for
    an nvvm op the table does not know."""
    for prefix, pattern, feature in NVVM_VARIANTS:
        if op_name.startswith(prefix) and re.search(pattern, attributes):
            return feature
    name = op_name
    while name:
        if name in NVVM_REQUIREMENTS:
            return NVVM_REQUIREMENTS[name]
        name = name.rpartition(".")[0]
    return None


def feature_description(feature: str) -> str:
    return _FEATURES[feature].description


class TargetError(ValueError):
    """A chip or PTX version tilemlir cannot compile for (raised when a Target is made, so by
    tilemlir.compile(target=...) and by pass options); the message names the value."""


def _checked_ptx(chip, ptx) -> int:
    """The PTX version of a target of `chip` (its minimum for None); TargetError for a chip or
    version tilemlir cannot compile for."""
    if not isinstance(chip, str):
        raise TargetError(f"a target is a chip name such as 'sm_90a', got {chip!r} "
                          f"({type(chip).__name__})")
    m = re.fullmatch(r"sm_(\d+)(a?)", chip)
    if m is None:
        raise TargetError(f"unknown chip '{chip}': expected sm_NN or sm_NNa (e.g. sm_80, sm_90a)")
    sm = int(m.group(1))
    floor = _MIN_PTX.get(sm)
    if floor is None:
        raise TargetError(f"unsupported chip '{chip}': known are "
                          + ", ".join(f"sm_{s}" for s in sorted(_MIN_PTX)))
    if m.group(2) and sm not in _ARCH_SPECIFIC:
        raise TargetError(f"unknown chip '{chip}': the arch-specific ('a') chips are "
                          + ", ".join(f"sm_{s}a" for s in _ARCH_SPECIFIC))
    if ptx is None:
        return floor
    if isinstance(ptx, bool) or not isinstance(ptx, int):
        raise TargetError(f"the PTX version is an integer such as 80, got {ptx!r}")
    if ptx not in KNOWN_PTX:
        raise TargetError(f"unknown PTX ISA version {ptx}: LLVM emits "
                          + ", ".join(str(v) for v in KNOWN_PTX))
    if ptx < floor:
        raise TargetError(f"{chip} needs PTX ISA {floor // 10}.{floor % 10} or newer, got "
                          f"{ptx // 10}.{ptx % 10}")
    return ptx


@dataclass(frozen=True)
class Target:
    """An NVIDIA chip such as sm_80, sm_90a or sm_100a, with the PTX version to emit (default:
    the chip's minimum). Checked when made: a Target is always one tilemlir can compile for."""
    chip: str
    ptx: int | None = None      # None: the chip's minimum; always an int once made

    def __post_init__(self):
        object.__setattr__(self, "ptx", _checked_ptx(self.chip, self.ptx))

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

    @property
    def shared_memory_bytes(self) -> int:
        """The most shared memory one block can use (dynamic allocation opted in)."""
        return _SHARED_BYTES[self.sm]

    def has_hardware_for(self, feature: str) -> bool:
        """Whether the chip has the feature, whatever the PTX version."""
        return _FEATURES[feature].available(self)

    def supports(self, feature: str) -> bool:
        return self.require(feature) is None

    def require(self, feature: str) -> str | None:
        """None when supported, else the reason it is not (for dispatch diagnostics)."""
        f = _FEATURES[feature]
        if not f.available(self):
            return f"{f.description} is not available on {self.chip}"
        if self.ptx < f.min_ptx:
            return (f"{f.description} needs PTX ISA {f.min_ptx // 10}.{f.min_ptx % 10} or "
                    f"newer, the target has {self.ptx // 10}.{self.ptx % 10} (set ptx=)")
        return None

    def __str__(self) -> str:
        return self.chip


DEFAULT_CHIP = "sm_90a"

REGISTER_FILE = 65536       # 32-bit registers per SM, sm_70 on: the most one CTA can hold


def registers_per_thread(threads: int) -> int:
    """The registers each of a CTA's `threads` threads holds when the kernel is built to fill the
    register file (.maxnreg): 64 Ki / threads rounded down to a multiple of 8, at most 248. The
    CTA then holds this many times `threads`, which is all that setmaxnreg can redistribute:
    .dec returns registers to the CTA's pool and .inc waits until that pool has enough."""
    return min(255, REGISTER_FILE // threads) // 8 * 8

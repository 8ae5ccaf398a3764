"""tile-check-target: no nvvm or nvgpu op that a target chip cannot compile (LLVM's NVPTX
backend aborts on those instead of reporting them), judged by the table in
tilemlir/target/chips.py, and no NVVM kernel attribute (written by hand on a gpu.func or
llvm.func) that LLVM would assert on or turn into PTX ptxas or the driver refuses."""

from __future__ import annotations

import math

from mlir import ir

from tilemlir.target import Target
from tilemlir.target.chips import NVVM_VARIANTS, feature_description, nvvm_requirement


# NVVM's kernel attributes that LLVM turns into PTX directives: extents (1 to 3 positive
# integers) and counts (positive). Zero or missing extents fail assertions in LLVM's NVPTX
# printer; a second block size (nvvm.maxntid next to known_block_size, which
# convert-gpu-to-nvvm turns into nvvm.maxntid too) one in MLIR.
KERNEL_EXTENTS = ("nvvm.cluster_dim", "nvvm.reqntid", "nvvm.maxntid")
KERNEL_COUNTS = ("nvvm.maxnreg", "nvvm.minctasm", "nvvm.cluster_max_blocks")
MAX_CLUSTER_CTAS = 16


def kernel_attribute_problems(func: ir.Operation, targets: list[Target]) -> list[str]:
    """What is wrong with the NVVM kernel attributes of `func` for `targets`."""
    problems = []
    for name in KERNEL_EXTENTS:
        if name not in func.attributes:
            continue
        attr = func.attributes[name]
        dims = list(ir.DenseI32ArrayAttr(attr)) if isinstance(attr, ir.DenseI32ArrayAttr) \
            else None
        if dims is None or not 1 <= len(dims) <= 3 or min(dims) < 1:
            problems.append(f"{name} must be 1 to 3 positive extents (array<i32: ...>), "
                            f"got {attr}")
            continue
        if name == "nvvm.maxntid" and "known_block_size" in func.attributes:
            problems.append("nvvm.maxntid and known_block_size both set the block size "
                            "(convert-gpu-to-nvvm makes nvvm.maxntid of known_block_size): "
                            "give known_block_size only")
        if name == "nvvm.cluster_dim":
            if math.prod(dims) > MAX_CLUSTER_CTAS:
                problems.append(f"nvvm.cluster_dim {dims} has {math.prod(dims)} CTAs; a "
                                f"cluster has at most {MAX_CLUSTER_CTAS}")
            for target in targets:
                if not target.has_hardware_for("clusters"):
                    problems.append(f"nvvm.cluster_dim: thread-block clusters need sm_90 or "
                                    f"newer, the target is {target.chip}")
    for name in KERNEL_COUNTS:
        if name in func.attributes:
            attr = func.attributes[name]
            if not isinstance(attr, ir.IntegerAttr) or ir.IntegerAttr(attr).value < 1:
                problems.append(f"{name} must be a positive integer, got {attr}")
    return problems


def unsupported_nvvm_ops(root: ir.Operation, targets: list[Target]) -> list:
    """(location, message) for every nvvm or nvgpu op under `root` some target cannot
    compile."""
    problems = []
    # Only ops the table tells apart by their attributes need them printed; the verdict is
    # the same for every op of one (name, attributes): a big kernel has few of those.
    by_attributes = tuple(prefix for prefix, _, _ in NVVM_VARIANTS)
    verdicts: dict = {}

    def verdict(name: str, attributes: str) -> str | None:
        feature = nvvm_requirement(name, attributes)
        if feature is None:
            return (f"'{name}' is not in tilemlir's table of nvvm/nvgpu ops and what each "
                    f"needs (tilemlir/target/chips.py)")
        for target in targets:
            if not target.has_hardware_for(feature):
                return (f"'{name}' needs a chip with {feature_description(feature)}; the "
                        f"target is {target.chip}")
            why = target.require(feature)
            if why:
                return f"'{name}': {why}"
        return None

    def visit(o):
        name = o.name
        if name in ("gpu.func", "llvm.func"):
            problems.extend((o.location, why) for why in kernel_attribute_problems(o, targets))
        if not name.startswith(("nvvm.", "nvgpu.")):
            return ir.WalkResult.ADVANCE
        attributes = " ".join(f"{key} = {o.attributes[key]}" for key in o.attributes) \
            if name.startswith(by_attributes) else ""
        key = (name, attributes)
        if key not in verdicts:
            verdicts[key] = verdict(name, attributes)
        if verdicts[key] is not None:
            problems.append((o.location, verdicts[key]))
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return problems

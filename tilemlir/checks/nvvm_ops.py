"""tile-check-target: no nvvm or nvgpu op that a target chip cannot compile (LLVM's NVPTX
backend aborts on those instead of reporting them), judged by the table in
tilemlir/target/chips.py."""

from __future__ import annotations

from mlir import ir

from tilemlir.target import Target
from tilemlir.target.chips import NVVM_VARIANTS, feature_description, nvvm_requirement


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

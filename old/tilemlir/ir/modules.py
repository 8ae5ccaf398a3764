"""Walking a module's gpu.modules."""

from __future__ import annotations

from collections.abc import Iterator

from mlir import ir


def gpu_module_ops(module: ir.Operation, op_name: str) -> Iterator[tuple[str, ir.Operation]]:
    """(gpu.module symbol, op) for each `op_name` op at the top of each gpu.module in `module`."""
    for top in module.regions[0].blocks[0].operations:
        if top.operation.name != "gpu.module":
            continue
        gpu_module = top.operation
        name = ir.StringAttr(gpu_module.attributes["sym_name"]).value
        for op in gpu_module.regions[0].blocks[0].operations:
            if op.operation.name == op_name:
                yield name, op.operation

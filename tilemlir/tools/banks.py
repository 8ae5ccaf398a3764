"""`tilemlir.check_banks(kernel, target=...)`: the shared-memory accesses of a kernel's copies
and reductions, as the variants dispatch chooses for `target` would make them, with the
wavefronts of each request against the ideal (tilemlir.lowering.banks):

    report = tilemlir.check_banks(hgemm_v6(4096, 4096, 4096), target="sm_90a")
    print(report)               # one line per access: Python line, instruction, wavefronts
    report.conflicts            # avoidable wavefronts per execution of every op, summed
"""

from __future__ import annotations

from mlir import ir

from tilemlir.ir.context import make_context
from tilemlir.lowering.banks import BankReport
from tilemlir.lowering.banks import check_banks as check_module
from tilemlir.lowering.cuda import load_variants
from tilemlir.pipeline import PipelineError, build_pass_manager, verify_pass
from tilemlir.target import DEFAULT_CHIP, Target


def check_banks(kernel, target: str | None = None) -> BankReport:
    """The BankReport of `kernel` (a @T.prim_func function, tile-IR text or an ir.Module) for
    `target` (a chip such as "sm_90a"; default sm_90a). Malformed tile IR raises
    PipelineError with tile-verify's diagnostics."""
    from tilemlir.dsl.kernel import KernelFunction
    if isinstance(kernel, KernelFunction):
        module = kernel.build()
    elif isinstance(kernel, ir.Module):
        module = kernel
    elif isinstance(kernel, str):
        with make_context():
            module = ir.Module.parse(kernel)
    else:
        raise TypeError(f"cannot check a {type(kernel).__name__}: pass a @T.prim_func function, "
                        f"tile-IR text or an ir.Module")
    chip = Target(target or DEFAULT_CHIP)
    with module.context:
        pm = build_pass_manager(verify_pass(chip))
        try:
            pm.run(module.operation)
        except ir.MLIRError as err:
            raise PipelineError(f"the kernel's tile IR does not verify: {err}") from None
        load_variants()
        return check_module(module.operation, chip)

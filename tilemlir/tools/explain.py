"""`tilemlir.explain(kernel, target=...)`: what tile-dispatch decides for every tile op of a
kernel, and why (tilemlir.dispatch.explain says what a Decision holds).

    print(tilemlir.explain(hgemm_v6(4096, 4096, 4096), target="sm_90a"))

Only tile-verify and tile-dispatch run (no lowering to PTX), in this process.
"""

from __future__ import annotations

from mlir import ir

from tilemlir.dispatch.explain import Explanation, recording


def explain(kernel, target=None) -> Explanation:
    """The dispatch Decisions for `kernel` (a @T.kernel function, tile-IR text or an
    ir.Module, which is not changed) on `target` (a chip such as "sm_90a"; default: the GPU's,
    else sm_90a). A dispatch that fails is explained too: its ops' Decisions have no variant,
    and the Explanation's `errors` holds the diagnostics."""
    from tilemlir.pipeline import build_pass_manager, dispatch_pass
    from tilemlir.runtime.compiler import _tile_module, resolve_target
    from tilemlir.tools.diagnostics import from_mlir
    resolved = resolve_target(target)
    module, _ = _tile_module(kernel)
    errors = []
    with module.context, recording() as decisions:
        pm = build_pass_manager(dispatch_pass(resolved))
        try:
            pm.run(module.operation)
        except ir.MLIRError as err:
            errors = [f"{d.line}:{d.col}: {d.severity}: {d.message}" if d.line else
                      f"{d.severity}: {d.message}"
                      for diagnostic in err.error_diagnostics for d in from_mlir(diagnostic)]
    return Explanation(decisions, errors)

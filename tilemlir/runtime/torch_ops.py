"""A compiled kernel as a torch custom op, so that it runs inside torch.compile(fullgraph=True).

    gemm = tilemlir.torch_op(tilemlir.compile(hgemm_v6(M, N, K)), "mylib::gemm", outputs=["D"])
    d = gemm(a, b)                      # D is allocated and returned; a and b are the inputs
    torch.compile(lambda a, b: gemm(a, b).relu(), fullgraph=True)(a, b)

The op is functional (outputs are allocated by the op, never mutated in the caller's tensors),
which is what torch.compile handles without graph breaks. Its fake implementation allocates the
outputs from the kernel's signature (shape and dtype are static there), so tracing never runs
the kernel. Inputs must be CUDA tensors on one device; the kernel runs on torch's current stream.
"""

from __future__ import annotations

from tilemlir.runtime.args import TORCH_DTYPE_NAMES, ArgumentError
from tilemlir.runtime.executable import Kernel


def torch_op(kernel: Kernel, name: str, outputs):
    """Registers `kernel` as the torch custom op `name` ("namespace::op"); `outputs` names the
    buffer parameters the kernel writes. The op takes the other parameters in order and returns
    the outputs (one tensor, or a tuple)."""
    from tilemlir.runtime.cuda import require_torch
    torch = require_torch("tilemlir.torch_op")

    if not isinstance(kernel, Kernel):
        raise ArgumentError(f"torch_op: kernel must be a compiled tilemlir Kernel, got "
                            f"{type(kernel).__name__}")
    if not isinstance(name, str) or "::" not in name:
        raise ArgumentError(f"torch_op: name must be 'namespace::op', got {name!r}")
    params = kernel.signature.params
    names = [p.name for p in params]
    outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    unknown = [o for o in outputs if o not in names]
    if unknown or not outputs:
        raise ArgumentError(f"torch_op: outputs must name buffer parameters of {kernel.name} "
                            f"({', '.join(names)}), got {outputs}")
    out_params = [p for p in params if p.name in outputs]
    if any(p.kind != "buffer" for p in out_params):
        raise ArgumentError(f"torch_op: outputs must be buffers, not scalars: {outputs}")
    in_params = [p for p in params if p.name not in outputs]
    dtypes = {p.name: getattr(torch, TORCH_DTYPE_NAMES[p.dtype]) for p in out_params}

    def allocate(device):
        return [torch.empty(p.shape, dtype=dtypes[p.name], device=device) for p in out_params]

    def result(tensors):
        return tensors[0] if len(tensors) == 1 else tuple(tensors)

    schema_out = "Tensor" if len(out_params) == 1 else \
        "(" + ", ".join("Tensor" for _ in out_params) + ")"
    schema_in = ", ".join(f"Tensor {p.name}" if p.kind == "buffer" else
                          f"{'float' if p.dtype.startswith('f') else 'int'} {p.name}"
                          for p in in_params)
    library, _, op_name = name.partition("::")
    lib = torch.library.Library(library, "FRAGMENT")
    lib.define(f"{op_name}({schema_in}) -> {schema_out}")

    def run(*args):
        first = next((a for a, p in zip(args, in_params) if p.kind == "buffer"), None)
        device = first.device if first is not None else torch.device("cuda")
        outs = allocate(device)
        by_name = dict(zip((p.name for p in in_params), args))
        by_name.update(zip((p.name for p in out_params), outs))
        kernel(*(by_name[n] for n in names))
        return result(outs)

    def fake(*args):
        first = next((a for a, p in zip(args, in_params) if p.kind == "buffer"), None)
        return result(allocate(first.device if first is not None else "cuda"))

    lib.impl(op_name, run, "CUDA")
    torch.library.register_fake(name, fake, lib=lib)
    op = getattr(getattr(torch.ops, library), op_name)
    op._tilemlir_library = lib              # the registration lives as long as the op
    return op

"""Host functions that launch a kernel through MLIR's gpu dialect (and so its CUDA runtime).

Two entry points per kernel, both with `llvm.emit_c_interface`:

  @<kernel>__copy(memref...)   takes host arrays: allocates device buffers, copies in,
                               launches, copies every buffer back, frees, and waits.
  @<kernel>__launch(i64...)    takes device addresses (torch / cupy tensors): launches and waits.

They use the async-token forms of gpu.alloc / memcpy / launch_func / dealloc, which lower to the
mgpu* calls of libmlir_cuda_runtime.so.
"""

from __future__ import annotations

from tilemlir.runtime.signature import KernelSignature, Param


def _memref(p: Param) -> str:
    return f"memref<{'x'.join(map(str, p.shape))}x{p.dtype}>"


def _launch(sig: KernelSignature, token: str, args: list[str], types: list[str]) -> list[str]:
    g, b = sig.grid, sig.block
    arglist = ", ".join(f"{a} : {t}" for a, t in zip(args, types))
    return [
        "  %gx = arith.constant {} : index".format(g[0]),
        "  %gy = arith.constant {} : index".format(g[1]),
        "  %gz = arith.constant {} : index".format(g[2]),
        "  %bx = arith.constant {} : index".format(b[0]),
        "  %by = arith.constant {} : index".format(b[1]),
        "  %bz = arith.constant {} : index".format(b[2]),
        f"  %smem = arith.constant {sig.shared_memory} : i32",
        f"  %launched = gpu.launch_func async [{token}] @{sig.module}::@{sig.name} "
        f"blocks in (%gx, %gy, %gz) threads in (%bx, %by, %bz) "
        f"dynamic_shared_memory_size %smem args({arglist})",
    ]


def _scalar_type(p: Param) -> str:
    return p.dtype


def copy_entry(sig: KernelSignature) -> str:
    """@<kernel>__copy: host arrays in, results copied back into them."""
    params = ", ".join(f"%h{i}: {_memref(p) if p.kind == 'buffer' else _scalar_type(p)}"
                       for i, p in enumerate(sig.params))
    lines = [f"func.func @{sig.name}__copy({params}) attributes {{llvm.emit_c_interface}} {{",
             "  %t0 = gpu.wait async"]
    token = "%t0"
    args, types, buffers = [], [], []
    for i, p in enumerate(sig.params):
        if p.kind == "scalar":
            args.append(f"%h{i}")
            types.append(p.dtype)
            continue
        m = _memref(p)
        lines += [f"  %d{i}, %a{i} = gpu.alloc async [{token}] () : {m}",
                  f"  %c{i} = gpu.memcpy async [%a{i}] %d{i}, %h{i} : {m}, {m}",
                  f"  %x{i} = memref.extract_aligned_pointer_as_index %d{i} : {m} -> index",
                  f"  %y{i} = arith.index_cast %x{i} : index to i64",
                  f"  %p{i} = llvm.inttoptr %y{i} : i64 to !llvm.ptr"]
        token = f"%c{i}"
        args.append(f"%p{i}")
        types.append("!llvm.ptr")
        buffers.append((i, m))
    lines += _launch(sig, token, args, types)
    token = "%launched"
    for i, m in buffers:
        lines += [f"  %back{i} = gpu.memcpy async [{token}] %h{i}, %d{i} : {m}, {m}",
                  f"  %free{i} = gpu.dealloc async [%back{i}] %d{i} : {m}"]
        token = f"%free{i}"
    lines += [f"  gpu.wait [{token}]", "  return", "}"]
    return "\n".join(lines)


def launch_entry(sig: KernelSignature) -> str:
    """@<kernel>__launch: device addresses (as i64) and scalars in."""
    params = ", ".join(f"%h{i}: {'i64' if p.kind == 'buffer' else _scalar_type(p)}"
                       for i, p in enumerate(sig.params))
    lines = [f"func.func @{sig.name}__launch({params}) attributes {{llvm.emit_c_interface}} {{"]
    args, types = [], []
    for i, p in enumerate(sig.params):
        if p.kind == "buffer":
            lines.append(f"  %p{i} = llvm.inttoptr %h{i} : i64 to !llvm.ptr")
            args.append(f"%p{i}")
            types.append("!llvm.ptr")
        else:
            args.append(f"%h{i}")
            types.append(p.dtype)
    lines.append("  %t0 = gpu.wait async")
    lines += _launch(sig, "%t0", args, types)
    lines += ["  gpu.wait [%launched]", "  return", "}"]
    return "\n".join(lines)

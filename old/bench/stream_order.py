"""Are kernel calls ordered on the caller's stream? (GPU check; prints a table, exits 1 on any
stale read.)

For each (framework, current stream, call form): 20 times, an input is produced by a copy queued
behind a long matmul on the current stream, then the kernel is called on it. A call that does
not run on that stream reads the stale input. Then a CUDA graph of 3 launches is captured with
torch.cuda.graph and replayed 10 times on fresh inputs; the kernel registered as a torch custom
op is called 20 times inside torch.compile(fullgraph=True) (graph breaks counted); with two GPUs,
the torch cases run on cuda:1 as well.

    python bench/stream_order.py [--out results/.../stream-order.md]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from tilemlir.kernels.hgemm_hopper import hgemm_v5  # noqa: E402

M = N = 256
K = 128
CALLS = 20


def _close(d, a, b) -> bool:
    ref = a.float() @ b.float().T
    return bool(((d.float() - ref).norm() / ref.norm()) < 1e-2)


def torch_case(kernel, side: bool, form: str, device: str = "cuda:0") -> int:
    with torch.cuda.device(device):
        big = torch.randn(8192, 8192, device=device, dtype=torch.float16)
        stream = torch.cuda.Stream() if side else torch.cuda.current_stream()
        stale = 0
        for _ in range(CALLS):
            src = torch.randn(M, K, device=device, dtype=torch.float16)
            b = torch.randn(N, K, device=device, dtype=torch.float16)
            a = torch.zeros(M, K, device=device, dtype=torch.float16)
            d = torch.zeros(M, N, device=device, dtype=torch.float16)
            torch.cuda.synchronize()
            with torch.cuda.stream(stream) if side else contextlib.nullcontext():
                torch.matmul(big, big)                  # ~1 ms of work ahead of the copy
                a.copy_(src)
                if form == "call":
                    kernel(a, b, d)
                elif form == "launch":
                    kernel.launch(a, b, d)
                else:                                   # explicit stream argument
                    kernel(a, b, d, stream=stream)
                torch.cuda.current_stream().synchronize()
            stale += not _close(d, src, b)
    return stale


def compile_case(kernel) -> tuple[int, int]:
    """The kernel as a torch custom op inside torch.compile(fullgraph=True), input produced
    behind a long matmul: (wrong results of 20, graph breaks)."""
    from torch._dynamo.utils import counters
    op = tilemlir.torch_op(kernel, "stream_order::gemm", outputs=["D"])
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.float16)

    def step(src, b):
        torch.matmul(big, big)
        a = src * 1.0                                   # produced on the stream, behind the matmul
        return op(a, b)

    compiled = torch.compile(step, fullgraph=True)
    counters.clear()
    wrong = 0
    for _ in range(CALLS):
        src = torch.randn(M, K, device="cuda", dtype=torch.float16)
        b = torch.randn(N, K, device="cuda", dtype=torch.float16)
        wrong += not _close(compiled(src, b), src, b)
    return wrong, sum(counters["graph_break"].values())


def cupy_case(kernel, side: bool) -> int:
    import cupy
    big = cupy.random.standard_normal((8192, 8192), dtype=cupy.float32).astype(cupy.float16)
    stream = cupy.cuda.Stream(non_blocking=True) if side else cupy.cuda.get_current_stream()
    stale = 0
    for _ in range(CALLS):
        with stream if side else contextlib.nullcontext():
            src = cupy.random.standard_normal((M, K), dtype=cupy.float32).astype(cupy.float16)
            b = cupy.random.standard_normal((N, K), dtype=cupy.float32).astype(cupy.float16)
            a = cupy.zeros((M, K), cupy.float16)
            d = cupy.zeros((M, N), cupy.float16)
            cupy.cuda.get_current_stream().synchronize()
            big @ big
            a[...] = src
            kernel(a, b, d)
            cupy.cuda.get_current_stream().synchronize()
        stale += not _close(torch.as_tensor(d, device="cuda"), torch.as_tensor(src, device="cuda"),
                            torch.as_tensor(b, device="cuda"))
    return stale


def graph_case(kernel) -> int:
    """3 launches captured in a CUDA graph, replayed 10x on fresh inputs: wrong replays."""
    ins = [(torch.randn(M, K, device="cuda", dtype=torch.float16),
            torch.randn(N, K, device="cuda", dtype=torch.float16),
            torch.zeros(M, N, device="cuda", dtype=torch.float16)) for _ in range(3)]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for a, b, d in ins:
            kernel(a, b, d)                             # warm up (loads the module)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for a, b, d in ins:
            kernel(a, b, d)
    wrong = 0
    for _ in range(10):
        for a, b, d in ins:
            a.copy_(torch.randn_like(a))
            b.copy_(torch.randn_like(b))
            d.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        wrong += sum(not _close(d, a, b) for a, b, d in ins)
    return wrong


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    kernel = tilemlir.compile(hgemm_v5(M, N, K))
    rows = []
    for side in (False, True):
        for form in ("call", "launch", "stream="):
            rows.append(("torch", "side" if side else "default", form,
                         torch_case(kernel, side, form)))
    try:
        for side in (False, True):
            rows.append(("cupy", "side" if side else "default", "call", cupy_case(kernel, side)))
    except ImportError:
        rows.append(("cupy", "-", "-", "cupy not installed"))
    rows.append(("torch", "CUDA graph, 3 launches x 10 replays", "call", graph_case(kernel)))
    wrong, breaks = compile_case(kernel)
    rows.append(("torch", "torch.compile(fullgraph=True), custom op", "call",
                 f"{wrong} ({breaks} graph breaks)"))
    if torch.cuda.device_count() > 1:
        for side in (False, True):
            for form in ("call", "launch"):
                rows.append(("torch, cuda:1", "side" if side else "default", form,
                             torch_case(kernel, side, form, "cuda:1")))
    else:
        rows.append(("torch, cuda:1", "-", "-", "one GPU only"))
    lines = ["| framework | current stream | call | stale / wrong of 20 (graph: of 30) |",
             "|---|---|---|---:|"] + [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(f"# Stream ordering (python bench/stream_order.py)\n\n"
                            f"- GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}\n\n"
                            + text + "\n")
    if any(isinstance(r[3], int) and r[3] for r in rows) or wrong or breaks:
        sys.exit(1)


if __name__ == "__main__":
    main()

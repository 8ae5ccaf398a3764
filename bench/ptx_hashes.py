"""A sha256 of the PTX of every shipped kernel at the shapes its tests use, to show that a
refactor leaves the generated code byte-identical (compiled with line_info=False).

    python bench/ptx_hashes.py                          # "kernel target sha256", sorted
    python bench/ptx_hashes.py --compare BEFORE.txt     # exit 1 if a hash changed or is missing
    python bench/ptx_hashes.py --tree /tmp/base         # fingerprint another checkout

Every case compiles from scratch (`cache=False`) in worker processes that import tilemlir from
--tree (default: the checkout holding this script), so neither the compile cache nor an
installed copy can answer. A case that raises prints ERROR, one that kills its worker (LLVM
aborts instead of raising) prints CRASHED, and the exit status is then 1.

A new kernel: add a Case to CASES (module:attribute of a kernel or of a function returning one,
its arguments, the chips). Lines starting with '#' in a --compare file are comments; cases that
file lacks are listed as new and do not fail the comparison.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    kernel: str                        # "tilemlir.kernels.<module>:<attribute>"
    targets: tuple[str, ...]
    args: tuple = ()                   # arguments of the factory; none: the attribute is a kernel
    kwargs: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        name = self.kernel.rsplit(":", 1)[1]
        if not self.args and not self.kwargs:
            return name
        params = [str(a) for a in self.args] + [f"{k}={v}" for k, v in self.kwargs.items()]
        return f"{name}({','.join(params)})"


def _cases() -> list[Case]:
    demo = "tilemlir.kernels.mma_demo:gemm_16x8x16"
    warp = "tilemlir.kernels.warp_gemm:warp_gemm"
    pipelined = "tilemlir.kernels.gemm_mma_sync:gemm_mma_sync"
    tcgen05 = "tilemlir.kernels.hgemm_tcgen05:hgemm_v"
    wgmma = "tilemlir.kernels.hgemm_wgmma:hgemm_wgmma_v"
    hopper = ("sm_90a",)
    cases = [Case(demo, ("sm_80", "sm_90a", "sm_100a"))]
    # test_gemm_mma_gpu.py (on the H200) and test/Language/warp-gemm-mma-count.mlir
    tilings = [(16, 8, 16), (32, 8, 16), (16, 32, 16), (16, 8, 64), (32, 16, 32), (64, 8, 16),
               (64, 32, 64), (16, 8, 8), (16, 8, 24)]
    modes = [("float16", 0.0), ("float16", 1.0), ("bfloat16", 0.0), ("bfloat16", 1.0)]
    cases += [Case(warp, hopper, (*mnk, dtype, beta)) for mnk in tilings for dtype, beta in modes]
    cases += [Case(warp, hopper, (32, 16, 32, dtype, 0.0, ta, tb))
              for dtype in ("float16", "bfloat16")
              for ta, tb in ((False, False), (True, False), (False, True), (True, True))
              if (ta, tb) != (False, False)]
    cases += [Case(warp, ("sm_80",), (32, 16, 32))]
    # test_gemm_mma_sync.py
    cases += [Case(pipelined, hopper, (1024, 1024, 1024)),
              Case(pipelined, hopper, (256, 512, 192, "float16")),
              Case(pipelined, hopper, (256, 512, 192, "bfloat16")),
              Case(pipelined, hopper, (384, 256, 448, "float16"),
                   dict(BM=128, BN=128, BK=32, STAGES=3)),
              Case(pipelined, hopper, (512, 256, 256, "bfloat16"),
                   dict(BM=256, BN=128, BK=128, STAGES=2)),
              Case(pipelined, hopper, (256, 256, 128, "float16"), dict(EPILOGUE=0, SPREAD=0))]
    # test/Language/hgemm-tcgen05.mlir, test/Target/hgemm-seed000-ptx.mlir
    cases += [Case(tcgen05 + "1", ("sm_100a",), (128, 128, 64)),
              Case(tcgen05 + "2", ("sm_100a",), (128, 128, 256)),
              Case(tcgen05 + "3", ("sm_100a",), (256, 256, 256))]
    # test_hgemm_wgmma_gpu.py and test/Target/hgemm-seed000-ptx.mlir
    cases += [Case(wgmma + "1", hopper, (128, 128, 64)),
              Case(wgmma + "2", hopper, (128, 128, 64)),
              Case(wgmma + "2", hopper, (128, 128, 1024)),
              Case(wgmma + "3", hopper, (128, 128, 64)),
              Case(wgmma + "3", hopper, (128, 128, 1024)),
              Case(wgmma + "3", hopper, (256, 256, 256)),
              Case(wgmma + "3", hopper, (4096, 4096, 4096))]
    # test_hgemm_hopper_gpu.py (on the H200) and test/Target/hgemm-hopper-ptx.mlir
    tma = "tilemlir.kernels.hgemm_hopper:hgemm_v"
    cases += [Case(tma + "4", hopper, (256, 512, 1024)),
              Case(tma + "4", hopper, (512, 256, 512), dict(BM=64, BN=128, STAGES=3)),
              Case(tma + "5", hopper, (256, 512, 1024)),
              Case(tma + "5", hopper, (576, 512, 320), dict(BM=192, BN=128, STAGES=3)),
              Case(tma + "5", hopper, (8192, 8192, 8192)),
              Case(tma + "6", hopper, (1000, 1000, 1000)),
              Case(tma + "6", hopper, (200, 136, 72), dict(BM=64, BN=128)),
              Case(tma + "6", hopper, (8192, 8192, 8192)),
              Case(tma + "7", hopper, (384, 768, 320)),
              Case(tma + "7", hopper, (136, 200, 72), dict(BM=64, BN=128)),
              Case(tma + "7", hopper, (8192, 8192, 8192)),
              Case(tma + "7", hopper, (8192, 8192, 8192), dict(CLUSTER_RELEASE=True))]
    # test_gemm_splitk_gpu.py (on the H200) and test_split_k.py: v6 with split-K, and the
    # configurations the GEMM front door picks for the small sweep shapes
    cases += [Case(tma + "6", hopper, (200, 296, 4096), dict(SPLIT_K=split)) for split in (2, 3, 4)]
    cases += [Case(tma + "6", hopper, (520, 520, 2048), dict(BM=128, BN=128, STAGES=6, SPLIT_K=2)),
              Case(tma + "6", hopper, (1000, 1000, 8192),
                   dict(BM=128, BN=128, STAGES=6, EPI_N=128, GROUP_M=8, SPLIT_K=2)),
              Case(tma + "6", hopper, (1000, 1000, 1000),
                   dict(BM=64, BN=128, STAGES=8, EPI_N=128, GROUP_M=8, SPLIT_K=1))]
    # v8: split-K in 2-CTA clusters (the front door's choice at 1000 x 1000 x 8192)
    cases += [Case(tma + "8", hopper, (1000, 1000, 8192), dict(BM=128, BN=128, STAGES=6,
                                                               SPLIT_K=2)),
              Case(tma + "8", hopper, (1000, 1000, 8192), dict(SPLIT_K=4)),
              Case(tma + "8", hopper, (200, 296, 4096), dict(SPLIT_K=4))]
    # v7 with the last wave split (the front door's choice at mid-size shapes)
    cases += [Case(tma + "7", hopper, (1536, 4096, 4096), dict(TAIL_SPLIT=2)),
              Case(tma + "7", hopper, (384, 768, 320), dict(TAIL_SPLIT=2, SMS=8))]
    # v7's other widths (128 x 320: two wgmma n160 along N) and v6's 128 x 192 split-K, the
    # front door's choices at 1280 and 768 x 4096 x 4096 and 320 x 4096 x 11008
    cases += [Case(tma + "7", hopper, (1280, 4096, 4096), dict(BN=320, STAGES=3, EPI_N=64)),
              Case(tma + "7", hopper, (768, 4096, 4096), dict(BN=192, STAGES=4, EPI_N=64)),
              Case(tma + "6", hopper, (320, 4096, 11008),
                   dict(BM=128, BN=192, STAGES=4, EPI_N=64, SPLIT_K=2)),
              Case(tma + "7", hopper, (1280, 4096, 4096), dict(STREAM_K=True))]
    # test_gemm_epilogue_gpu.py (on the H200) and bench/gemm_epilogue.py
    fused = "tilemlir.kernels.gemm_epilogue:hgemm_fused"
    cases += [Case(fused, hopper, (1000, 1000, 512), dict(activation="gelu", residual=True,
                                                          alpha=0.5)),
              Case(fused, hopper, (8192, 8192, 8192))]
    # test_elementwise_gpu.py / bench/norms.py and test_attention_gpu.py / bench/attention.py
    norms = "tilemlir.kernels.norms:"
    cases += [Case(norms + "softmax", hopper, (4096, 16384)),
              Case(norms + "softmax", hopper, (1000, 8192), dict(dtype="bfloat16")),
              Case(norms + "rms_norm", hopper, (4096, 8192))]
    attention = "tilemlir.kernels.attention:flash_attention"
    cases += [Case(attention, hopper, (8, 16, 4096, d), dict(causal=causal))
              for d in (64, 128) for causal in (False, True)]
    cases += [Case(attention, hopper, (2, 3, 640, 64), dict(PIPELINE=False, PINGPONG=False,
                                                          SMS=3, dtype="bfloat16"))]
    # test/Target/hgemm-blackwell-ptx.mlir
    blackwell = "tilemlir.kernels.hgemm_blackwell:hgemm_v"
    cases += [Case(blackwell + "4", ("sm_100a",), (1024, 1024, 1000)),
              Case(blackwell + "5", ("sm_100a",), (1024, 1024, 1024)),
              Case(blackwell + "6", ("sm_100a",), (4096, 4096, 1024)),
              Case(blackwell + "7", ("sm_100a",), (1024, 1024, 1024))]
    # test_fp8.py, test_fp8_gemm_gpu.py and bench/fp8_gemm.py
    fp8 = "tilemlir.kernels.fp8_gemm:fp8_gemm"
    cases += [Case(fp8, hopper, (8192, 8192, 8192), dict(scaling=scaling))
              for scaling in ("tensor", "row", "block")]
    cases += [Case(fp8, hopper, (8192, 8192, 8192), dict(scaling="tensor", PROMOTE=True))]
    cases += [Case(fp8, hopper, (1000, 1001, 1003), dict(scaling="block", BM=64, CLUSTER=False,
                                                         PRODUCER="cp_async",
                                                         EPILOGUE="direct"))]
    # the front door's kernels for unaligned and decode shapes (bench/smoke_shapes.py,
    # test_gemm_splitk_gpu.py): masked cp.async loads, direct stores, swap-AB decode with split K
    cases += [Case(tma + "6", hopper, (1785, 4444, 4095), dict(PRODUCER="cp_async",
                                                               EPILOGUE="direct")),
              Case(tma + "7", hopper, (3333, 4444, 5552), dict(EPILOGUE="direct"))]
    decode = "tilemlir.kernels.gemm_decode:hgemm_decode"
    cases += [Case(decode, hopper, (1, 4096, 4096)),
              Case(decode, hopper, (16, 4096, 4096), dict(SPLIT_K=4)),
              Case(decode, hopper, (7, 1000, 515), dict(PRODUCER="cp_async"))]
    # odd N through the staged epilogue (parts.StagedStore), narrow N through the decode
    # kernel with M and N exchanged
    cases += [Case(tma + "6", hopper, (2999, 8193, 769), dict(PRODUCER="cp_async",
                                                              EPILOGUE="staged")),
              Case(tma + "7", hopper, (2048, 50257, 1024), dict(EPILOGUE="staged")),
              Case(fp8, hopper, (1000, 1001, 1024), dict(scaling="row", CLUSTER=False,
                                                         EPILOGUE="staged")),
              Case(decode, hopper, (516, 1, 5323), dict(SPLIT_K=3, PRODUCER="cp_async",
                                                        SWAP=True)),
              Case("tilemlir.kernels.gemm_epilogue:hgemm_fused", hopper, (333, 447, 555),
                   dict(residual=True, EPILOGUE="staged"))]
    # the norms at any N and the general-shape attention kernel (run-time B, H and lengths)
    cases += [Case(norms + "layer_norm", hopper, (1000, 50257)),
              Case(norms + "rms_norm", hopper, (333, 1000), dict(dtype="bfloat16"))]
    cases += [Case(attention, hopper, (None, None, None, d), dict(causal=True, group=4))
              for d in (96, 256)]
    return cases


CASES = _cases()
JOBS = [(case, target) for case in CASES for target in case.targets]


# ---------------------------------------------------------------------------- worker side
def _fingerprint(case: Case, target: str) -> str:
    import importlib

    import tilemlir
    module, attribute = case.kernel.split(":")
    kernel = getattr(importlib.import_module(module), attribute)
    if case.args or case.kwargs:
        kernel = kernel(*case.args, **case.kwargs)
    # Without line info: the .file/.loc directives name the checkout's path and would make
    # every edit of a kernel file (or another --tree) a "change". Trees from before the option
    # compiled without it.
    import inspect
    options = {"line_info": False} \
        if "line_info" in inspect.signature(tilemlir.compile).parameters else {}
    ptx = tilemlir.compile(kernel, target=target, cache=False, **options).ptx
    return hashlib.sha256(ptx.encode()).hexdigest()


def _worker(tree: Path) -> None:
    """Reads job indices from stdin, answers one line per job on stdout."""
    import tilemlir
    if not Path(tilemlir.__file__).resolve().is_relative_to(tree):
        sys.exit(f"ptx_hashes: tilemlir was imported from {tilemlir.__file__}, not from {tree}")
    for line in sys.stdin:
        index = int(line)
        case, target = JOBS[index]
        try:
            answer = _fingerprint(case, target)
        except Exception as err:  # reported as a result: the other cases still run
            first_lines = "\n".join(str(err).splitlines()[:4])
            print(f"ptx_hashes: {case.label} {target}: {type(err).__name__}: {first_lines}",
                  file=sys.stderr, flush=True)
            answer = "ERROR"
        print(index, answer, flush=True)


# ---------------------------------------------------------------------------- parent side
def _start_worker(tree: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("TILEMLIR_DUMP", None)          # dumps would only slow the run down
    script = str(Path(__file__).resolve())
    return subprocess.Popen([sys.executable, script, "--worker", "--tree", str(tree)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                            cwd=tree)


def fingerprints(tree: Path, jobs: int, selected: list[int]) -> dict[int, str]:
    """{job index: sha256 | ERROR | CRASHED}; `jobs` workers take jobs off one queue."""
    queue = list(reversed(selected))
    lock = threading.Lock()
    results: dict[int, str] = {}

    def drive() -> None:
        worker = None
        while True:
            with lock:
                if not queue:
                    break
                index = queue.pop()
            if worker is None:
                worker = _start_worker(tree)
            worker.stdin.write(f"{index}\n")
            worker.stdin.flush()
            answer = worker.stdout.readline().split()
            if answer:
                results[index] = answer[1]
            else:                            # the worker died on this job: start another
                results[index] = f"CRASHED(exit={worker.wait()})"
                worker = None
        if worker is not None:
            worker.stdin.close()
            worker.wait()

    threads = [threading.Thread(target=drive) for _ in range(max(1, min(jobs, len(selected))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def _read_hashes(path: Path) -> dict[tuple[str, str], str]:
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            label, target, digest = line.split()
            out[label, target] = digest
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=REPO,
                        help="checkout whose tilemlir is fingerprinted (default: this one)")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1)
    parser.add_argument("-k", metavar="REGEX", help="only the cases whose label matches")
    parser.add_argument("--compare", type=Path, metavar="FILE",
                        help="compare with an earlier output instead of printing")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    tree = args.tree.resolve()
    if args.worker:
        _worker(tree)
        return 0

    selected = [i for i, (case, _) in enumerate(JOBS)
                if not args.k or re.search(args.k, case.label)]
    results = fingerprints(tree, args.jobs, selected)
    lines = sorted(f"{JOBS[i][0].label} {JOBS[i][1]} {results[i]}" for i in selected)
    failed = any(len(results[i]) != 64 for i in selected)
    if args.compare is None:
        print("\n".join(lines))
        return 1 if failed else 0

    before = _read_hashes(args.compare)
    now = {(label, target): digest for label, target, digest in map(str.split, lines)}
    changed = [f"changed  {l} {t}: {before[l, t]} -> {d}" for (l, t), d in sorted(now.items())
               if (l, t) in before and before[l, t] != d]
    missing = [f"missing  {l} {t}" for (l, t) in sorted(before) if (l, t) not in now and not args.k]
    new = [f"new      {l} {t} {d}" for (l, t), d in sorted(now.items()) if (l, t) not in before]
    for line in changed + missing + new:
        print(line)
    same = len(now) - len(new) - len(changed)
    print(f"{same} identical, {len(changed)} changed, {len(missing)} missing, {len(new)} new")
    return 1 if changed or missing or failed else 0


if __name__ == "__main__":
    sys.exit(main())

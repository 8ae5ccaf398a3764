"""Fuzzes tilemlir-opt with mutants of the lit tests' tile IR, each compiled by tile-to-ptx (or
--pipeline) in a child process with a timeout, and the kernel language with generated kernels
(`--language N`), each compiled by tilemlir.compile; classifies every outcome:

    clean     exit 1 with a diagnostic, or a public tilemlir exception (the expected answer
              to bad input)
    accepted  exit 0 / compiled (the mutant was valid, or the checks let it through)
    traceback a Python traceback, an 'internal error' or an exception of another type (a
              tilemlir bug)
    death     the process was killed (LLVM abort, assertion, segfault)
    hang      no answer within the timeout
    other     any other exit status

    python bench/fuzz_tile_ir.py -n 10000 --language 2000 --seed 1 --jobs 2 --out results/FILE.md

Mutant i of a seed is always the same text (random.Random(f"{seed}:{i}")), so `--only I` replays
one (`--only L3` the language mutant 3). The seeds are the chunks of test/{Dialect,Dispatch,
Target,Language,Inputs}/*.mlir (split at '// -----', FileCheck lines dropped); besides generic
mutations (numbers, types, scopes, op names, lines, junk) some aim at the kernel facts the
verifier checks: cluster shapes and their opt-in, named barrier ids and counts, cta_groups,
multicast masks, NVVM kernel attributes, and tile shapes (TMA boxes). The language mutants are
kernels drawn from templates (clusters, named barriers, tcgen05 commits and cta_groups, TMA
loads) with random parameters and targets. Cases run in-process in worker children (test/
robustness/runner.py), many per child, restarted after a death or a hang.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import os
import platform
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "test" / "robustness"))
from runner import run_cases  # noqa: E402

CHIPS = ("sm_75", "sm_80", "sm_90a", "sm_100a")
INTERESTING_INTS = ("0", "-1", "1", "2", "3", "7", "31", "33", "64", "1023", "1024", "1025",
                    "4096", "65536", "2147483647", "2147483648", "-2147483648",
                    "9223372036854775807", "-9223372036854775808", "99999999999999999999")
TYPES = ("f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "index", "none",
         "f8E4M3FN", "complex<f32>", "vector<2xf16>", "tf32")
WORDS = ('"warp"', '"thread"', '"warpgroup"', '"cta"', '"block"', '"shared"', '"global"',
         '"local"', '"tmem"', '"row"', '"col"', '""', '"cp_async"', '"tma"', '"tcgen05"')
OPS = ("tile.copy", "tile.gemm", "tile.cast", "tile.fill", "tile.slice", "tile.view",
       "tile.copy_async", "tile.gemm_async", "tile.alloc_shared", "tile.alloc_local",
       "tile.global", "tile.tmem", "tile.storage", "tile.addr", "tile.elect_sync",
       "tile.mbarrier_wait", "tile.tmem_alloc", "tile.fence", "tile.setmaxnreg")
JUNK = ("{", "}", "(", ")", "<", ">", "[", "]", ",", ":", "%", "^bb1", '"', "@", "#", "!",
        "-> ()", "\x00", "\u00e9", "// -----")
EXTENTS = ("0", "1", "2", "3", "4", "8", "16", "32", "-1", "65536")
# Kernel attributes and their values (the verifier's facts): (pattern, replacement choices).
BLOCKS = ("32", "64", "128", "256", "1024", "0")
COUNTS = ("0", "16", "32", "48", "64", "96", "128", "256", "1024", "2048", "-32")
MASKS = ("0", "1", "3", "4", "15", "255", "-1", "32767")
ROWS, COLS = ("8", "64", "128", "256", "300", "512"), ("4", "8", "64", "128", "256", "304", "512")


def _cluster(rng) -> str:
    extents = ", ".join(rng.choice(EXTENTS) for _ in range(rng.choice((2, 3, 3, 3, 4))))
    return f"tile.cluster = array<i32: {extents}>"


def _block_and_cluster(rng) -> str:
    text = (f"known_block_size = array<i32: {rng.choice(BLOCKS)}, 1, 1>, tile.cluster = "
            f"array<i32: {rng.choice(EXTENTS)}, {rng.choice(('1', '2'))}, 1>")
    return text + rng.choice(("", ", tile.cluster_non_portable",
                              ", tile.grid = array<i32: 6, 1, 1>"))


def _nvvm_attribute(rng) -> str:
    return rng.choice((f"nvvm.cluster_dim = array<i32: {rng.choice(EXTENTS)}, 1, 1>",
                       f"nvvm.reqntid = array<i32: {rng.choice(EXTENTS)}, 1, 1>",
                       "nvvm.maxntid = array<i32: 128, 1, 1>",
                       f"nvvm.maxnreg = {rng.choice(('0', '32', '-1'))} : i32"))


KERNEL_ATTRS = (
    (r"tile\.cluster = array<i32: [^>]*>", _cluster),
    (r"known_block_size = array<i32: [^>]*>", _block_and_cluster),
    (r"threads = -?\d+ : i64", lambda rng: f"threads = {rng.choice(COUNTS)} : i64"),
    (r"cta_group = -?\d+ : i(32|64)",
     lambda rng: f"cta_group = {rng.choice(('0', '1', '2', '3', '-1'))} : i64"),
    (r"arith\.constant -?\d+ : i16", lambda rng: f"arith.constant {rng.choice(MASKS)} : i16"),
    (r"arith\.constant -?\d+ : i32",
     lambda rng: f"arith.constant {rng.choice(('0', '1', '15', '16', '-1', '99'))} : i32"),
    (r"nvvm\.\w+ = array<i32: [^>]*>|nvvm\.(maxnreg|minctasm|cluster_max_blocks) = -?\d+ : i32",
     _nvvm_attribute),
    (r"array<i64: \d+, \d+>",
     lambda rng: f"array<i64: {rng.choice(ROWS)}, {rng.choice(COLS)}>"),
)


def seed_chunks() -> list[str]:
    chunks = []
    for folder in ("Dialect", "Dispatch", "Target", "Language", "Inputs"):
        for path in sorted((REPO / "test" / folder).glob("*.mlir")):
            text = "\n".join(line for line in path.read_text().splitlines()
                             if not re.match(r"\s*//\s*(RUN|CHECK|[A-Z0-9]+(-[A-Z]+)?):", line))
            for chunk in re.split(r"^//\s*-----\s*$", text, flags=re.M):
                if "tile." in chunk or "nvvm." in chunk:
                    chunks.append(chunk)
    return chunks


def _replace_random(rng, text, pattern, choices) -> str:
    matches = list(re.finditer(pattern, text))
    if not matches:
        return text
    m = rng.choice(matches)
    return text[:m.start()] + rng.choice(choices) + text[m.end():]


def mutate_once(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    kind = rng.randrange(15)
    if kind >= 12:         # a kernel fact the verifier checks
        pattern, make = rng.choice(KERNEL_ATTRS)
        matches = list(re.finditer(pattern, text))
        if not matches:
            pattern, make = KERNEL_ATTRS[1]          # every kernel has a block size
            matches = list(re.finditer(pattern, text))
        if matches:
            m = rng.choice(matches)
            return text[:m.start()] + make(rng) + text[m.end():]
        return text
    if kind == 0:
        return _replace_random(rng, text, r"(?<![\w@%#])-?\d+(?![\w.])", INTERESTING_INTS)
    if kind == 1:
        return _replace_random(rng, text, r"(?<![\w@%#])\d+(?![\w.])",
                               [str(rng.randrange(0, 300))])
    if kind == 2 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif kind == 3:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif kind == 4 and len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 5:
        return _replace_random(rng, text, r"\b(f16|bf16|f32|f64|i1|i8|i16|i32|i64|index)\b", TYPES)
    elif kind == 6:
        return _replace_random(rng, text, r'"(warp|thread|warpgroup|cta|shared|global|local|tmem|'
                                          r'row|col|cp_async|tma|tcgen05)"', WORDS)
    elif kind == 7:
        return _replace_random(rng, text, r"tile\.\w+", OPS)
    elif kind == 8:
        return text[:rng.randrange(len(text) + 1)]
    elif kind == 9:
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(JUNK) + text[i:]
    elif kind == 10:
        return _replace_random(rng, text, r"sm_\d+a?", CHIPS + ("sm_52", "sm_120a", "sm_80a"))
    else:
        # a layout stride or extent
        return _replace_random(rng, text, r"(?<=[(:, ])\d+(?=@|[,)\]])",
                               [str(rng.choice((0, 1, 2, 3, 5, 8, 16, 64, 4096)))])
    return "\n".join(lines)


def mutant(seeds: list[str], seed: int, index: int) -> tuple[str, str]:
    """(text, chip) of mutant `index`: one to three mutations of one seed chunk."""
    rng = random.Random(f"{seed}:{index}")
    text = rng.choice(seeds)
    for _ in range(rng.choice((1, 1, 2, 3))):
        text = mutate_once(rng, text)
    return text, rng.choice(CHIPS)


# ------------------------------------------------------------------ kernel-language mutants
# The exceptions a bad kernel may end in: public tilemlir errors with a message (KernelError
# names the Python line, MLIRError carries located diagnostics). Anything else is a bug.
PUBLIC_ERRORS = ("KernelError", "MLIRError", "TargetError", "PipelineError", "ShapeError",
                 "ArgumentError", "SourceError", "LayoutError")
LANGUAGE_HEADER = "import tilemlir.lang as T\nTx = T.tile\n\n"


def _cluster_kernel(rng) -> str:
    dims = [rng.choice((1, 2, 2, 4, 8, 16)) for _ in range(rng.choice((1, 1, 2, 3)))]
    grid = [rng.choice((1, 2, 4, 6, 8, 16, 32)) for _ in range(len(dims))]
    cluster = rng.choice((dims, [0] + dims[1:], [True], dims + [1, 1], [-2]))
    opt_in = rng.choice(("", ", non_portable=True", ", non_portable=False", ", non_portable=1"))
    return f"""@T.prim_func
def k(D: T.Buffer((64,), "int32")):
    ids = T.cta_id({grid})
    T.cluster_shape({cluster}{opt_in})
    lane = T.lane_id([32])
    if lane == 0:
        T.cuda.cluster_sync()
        D[0] = T.cuda.cluster_ctarank()
"""


def _barrier_kernel(rng) -> str:
    threads = rng.choice((32, 64, 96, 128, 256, 512, 1024))
    barrier = rng.choice(("0", "1", "15", "16", "-1", "True", "tid // 128"))
    count = rng.choice(("32", "48", "64", "128", "256", "1024", "2048", "0", "64.0"))
    op = rng.choice((f"T.cuda.bar_sync({barrier}, {count})",
                     f"T.cuda.bar_arrive({barrier}, {count})",
                     f"ok = T.cuda.bar_or({barrier}, {count}, tid == 0)"))
    return f"""@T.prim_func
def k(D: T.Buffer(({threads},), "float32")):
    T.cta_id([1])
    tid = T.thread_id([{threads}])
    if tid < {rng.choice((threads, 64, 128))}:
        {op}
    D[tid] = D[tid]
"""


def _tcgen05_kernel(rng) -> str:
    cluster = rng.choice(("", "T.cluster_shape([2])", "T.cluster_shape([1, 2])",
                          "T.cluster_shape([4])", "T.cluster_shape([3])"))
    alloc_group, commit_group = rng.choice((1, 2, 3, 0)), rng.choice((1, 2, 2, 0))
    mask = rng.choice(("None", "0", "1", "3", "4", "15", "255", "65536", "True"))
    return f"""@T.prim_func
def k(D: T.Buffer((4,), "int32")):
    T.cta_id([4, 2])
    {cluster or "pass"}
    warp = T.warp_id([{rng.choice((1, 4))}])
    T.lane_id([32])
    pool = T.SMEMPool()
    addr = pool.alloc((1,), "uint32")
    bar = pool.alloc((1,), "uint64", align=8)
    pool.commit()
    if warp == 0:
        T.ptx.tcgen05.alloc(T.address_of(addr), n_cols={rng.choice((32, 32, 64, 128, 48, 1024))},
                            cta_group={alloc_group})
    T.cuda.cta_sync()
    if warp == 0:
        if T.ptx.elect_sync():
            T.ptx.tcgen05.commit(bar.ptr_to([0]), cta_group={commit_group}, multicast={mask})
"""


def _tma_kernel(rng) -> str:
    rows = rng.choice((8, 64, 128, 256, 300, 512))
    cols = rng.choice((4, 8, 32, 64, 128, 256, 304, 512))
    swizzle = rng.choice(("128B", "64B", "32B", "none"))
    g_rows, g_cols = rng.choice((rows, 2 * rows, 1000)), rng.choice((cols, 2 * cols, 100, 1000))
    return f"""LAYOUT = None
try:
    LAYOUT = T.mma_shared_layout("float16", {swizzle!r}, ({rows}, {cols}))
except Exception:
    LAYOUT = None


@T.prim_func
def k(A: T.Buffer(({g_rows}, {g_cols}), "float16"), D: T.Buffer((1,), "int32")):
    T.cta_id([1])
    lane = T.lane_id([32])
    pool = T.SMEMPool()
    bar = pool.alloc((1,), "uint64", align=8)
    pool.move_base_to(1024)
    tile = pool.alloc(({rows}, {cols}), "float16", layout=LAYOUT)
    pool.commit()
    if lane == 0:
        T.ptx.mbarrier.init(bar.ptr_to([0]), 1)
        T.ptx.mbarrier.arrive_expect_tx(bar.ptr_to([0]), {rows * cols * 2})
        Tx.copy_async(tile[:, :], A[0:{rows}, 0:{cols}], bar.ptr_to([0]))
        T.ptx.mbarrier.try_wait(bar.ptr_to([0]), 0)
"""


LANGUAGE_TEMPLATES = (_cluster_kernel, _barrier_kernel, _tcgen05_kernel, _tma_kernel)


def language_mutant(seed: int, index: int) -> tuple[str, str]:
    """(module source defining kernel `k`, chip) of language mutant `index`."""
    rng = random.Random(f"{seed}:language:{index}")
    return LANGUAGE_HEADER + rng.choice(LANGUAGE_TEMPLATES)(rng), rng.choice(CHIPS)


LANGUAGE_CASE = """import importlib.util, os, tempfile
source, chip = {source!r}, {chip!r}
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "mutant_{index}.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("mutant_{index}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tilemlir.compile(module.k, target=chip, cache=False)
"""


def classify(result: dict) -> str:
    if result["outcome"] != "ok":
        return result["outcome"]
    if "rc" not in result:                            # a kernel-language (Python) case
        raised = result.get("exception")
        if raised is None:
            return "accepted"
        public = any(c.rsplit(".", 1)[-1] in PUBLIC_ERRORS for c in result["classes"])
        return "clean" if public and "internal error" not in raised else "traceback"
    stderr = result.get("stderr", "")
    if "Traceback" in stderr or "internal error" in stderr:
        return "traceback"
    if result["rc"] == 0:
        return "accepted"
    if result["rc"] == 1 and stderr.strip():
        return "clean"
    return "other"


def _tree() -> str:
    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no").strip() else ""
    return f"{git('rev-parse', '--short', 'HEAD').strip()}{dirty}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1000, help="number of IR mutants")
    ap.add_argument("--language", type=int, default=0, help="number of kernel-language mutants")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per mutant")
    ap.add_argument("--pipeline", default="tile-to-ptx{chip={chip}}",
                    help="the pass pipeline inside builtin.module(...); {chip} is the mutant's chip")
    ap.add_argument("--only", help="run (and print) just this mutant: I, or LI for a language one")
    ap.add_argument("--out", help="write the summary (Markdown) here")
    args = ap.parse_args()

    seeds = seed_chunks()
    if args.only is not None:
        ids = [args.only]
    else:
        ids = [str(i) for i in range(args.n)] + [f"L{i}" for i in range(args.language)]
    cases = []
    for case_id in ids:
        if case_id.startswith("L"):
            index = int(case_id[1:])
            source, chip = language_mutant(args.seed, index)
            cases.append({"id": case_id, "kind": "py", "code": LANGUAGE_CASE.format(
                source=source, chip=chip, index=index)})
            if args.only is not None:
                print(f"# chip {chip}\n{source}")
            continue
        text, chip = mutant(seeds, args.seed, int(case_id))
        if args.only is not None:
            print(f"// chip {chip}\n{text}")
        cases.append({"id": case_id, "kind": "opt", "stdin": base64.b64encode(
            text.encode("utf-8", "surrogatepass")).decode(),
            "argv": [f"--pass-pipeline=builtin.module({args.pipeline.replace('{chip}', chip)})"]})
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    env.pop("TILEMLIR_DEBUG", None)
    results: dict = {}
    began = time.perf_counter()
    shards = [cases[k::args.jobs] for k in range(args.jobs)]
    threads = [threading.Thread(target=lambda s=s: results.update(run_cases(s, args.timeout, env)))
               for s in shards if s]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - began
    classes = {c["id"]: classify(results[c["id"]]) for c in cases}
    bad = {i: c for i, c in classes.items() if c in ("traceback", "death", "hang", "other")}
    ir_ids = [i for i in classes if not i.startswith("L")]
    language_ids = [i for i in classes if i.startswith("L")]

    lines = [f"# Fuzzing tile-to-ptx with mutated lit-test IR ({len(ir_ids)} mutants) and the "
             f"kernel language ({len(language_ids)} kernels)", "",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- machine: {platform.node()}, {platform.machine()}, {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, no GPU needed",
             f"- command: `python bench/fuzz_tile_ir.py {' '.join(sys.argv[1:])}`",
             f"- tree: {_tree()}",
             f"- seeds: {len(seeds)} chunks of test/{{Dialect,Dispatch,Target,Language,Inputs}}/"
             f"*.mlir; language kernels from {len(LANGUAGE_TEMPLATES)} templates",
             f"- time: {seconds:.0f} s ({len(ids) / seconds:.1f} mutants/s, {args.jobs} jobs)", "",
             "| outcome | IR mutants | language mutants | all |", "|---|---|---|---|"]
    for name in ("clean", "accepted", "traceback", "death", "hang", "other"):
        ir_count = sum(classes[i] == name for i in ir_ids)
        language_count = sum(classes[i] == name for i in language_ids)
        lines.append(f"| {name} | {ir_count} | {language_count} | {ir_count + language_count} |")
    if bad:
        lines += ["", "Not clean (replay one with `--seed S --only I`):", ""]
        for i, c in sorted(bad.items())[:50]:
            r = results[i]
            tail = (r.get("exception") or r.get("stderr", "")).strip().splitlines()[-1:] or [""]
            lines.append(f"- {i}: {c}: `{tail[0][:200]}`")
    summary = "\n".join(lines) + "\n"
    print(summary)
    if args.only is not None:
        r = results[args.only]
        print(r.get("exception") or "", r.get("stderr", ""))
    if args.out:
        Path(args.out).write_text(summary)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

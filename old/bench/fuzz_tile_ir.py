"""Fuzzes tilemlir-opt with mutants of the lit tests' tile IR, each compiled by tile-to-ptx (or
--pipeline) in a child process with a timeout, and classifies every outcome:

    clean     exit 1 with a diagnostic (the expected answer to bad input)
    accepted  exit 0 (the mutant was valid, or the checks let it through)
    traceback a Python traceback or an 'internal error' (a tilemlir bug)
    death     the process was killed (LLVM abort, assertion, segfault)
    hang      no answer within the timeout
    other     any other exit status

    python bench/fuzz_tile_ir.py -n 10000 --seed 1 --jobs 2 --out results/FILE.md

Mutant i of a seed is always the same text (random.Random(f"{seed}:{i}")), so `--only I` replays
one. The seeds are the chunks of test/{Dispatch,Target,Language,Inputs}/*.mlir (split at
'// -----', FileCheck lines dropped). Cases run in-process in a worker child (test/robustness/
runner.py) that is restarted after a death or a hang.
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


def seed_chunks() -> list[str]:
    chunks = []
    for folder in ("Dispatch", "Target", "Language", "Inputs"):
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
    kind = rng.randrange(12)
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


def classify(result: dict) -> str:
    if result["outcome"] != "ok":
        return result["outcome"]
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
    ap.add_argument("-n", type=int, default=1000, help="number of mutants")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per mutant")
    ap.add_argument("--pipeline", default="tile-to-ptx{chip={chip}}",
                    help="the pass pipeline inside builtin.module(...); {chip} is the mutant's chip")
    ap.add_argument("--only", type=int, help="run (and print) just this mutant")
    ap.add_argument("--out", help="write the summary (Markdown) here")
    args = ap.parse_args()

    seeds = seed_chunks()
    indices = [args.only] if args.only is not None else list(range(args.n))
    if args.only is not None:
        text, chip = mutant(seeds, args.seed, args.only)
        print(f"// chip {chip}\n{text}")
    cases = []
    for i in indices:
        text, chip = mutant(seeds, args.seed, i)
        cases.append({"id": str(i), "kind": "opt", "stdin": base64.b64encode(
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
    classes = {i: classify(results[c["id"]]) for i, c in zip(indices, cases)}
    counts = Counter(classes.values())
    bad = {i: c for i, c in classes.items() if c in ("traceback", "death", "hang", "other")}

    lines = [f"# Fuzzing tile-to-ptx with mutated lit-test IR ({len(indices)} mutants)", "",
             f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
             f"- machine: {platform.node()}, {platform.machine()}, {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, no GPU needed",
             f"- command: `python bench/fuzz_tile_ir.py {' '.join(sys.argv[1:])}`",
             f"- tree: {_tree()}",
             f"- seeds: {len(seeds)} chunks of test/{{Dispatch,Target,Language,Inputs}}/*.mlir",
             f"- time: {seconds:.0f} s ({len(indices) / seconds:.1f} mutants/s, {args.jobs} jobs)", "",
             "| outcome | mutants |", "|---|---|"]
    for name in ("clean", "accepted", "traceback", "death", "hang", "other"):
        lines.append(f"| {name} | {counts.get(name, 0)} |")
    if bad:
        lines += ["", "Not clean (replay one with `--seed S --only I`):", ""]
        for i, c in sorted(bad.items())[:50]:
            tail = results[str(i)].get("stderr", "").strip().splitlines()[-1:] or [""]
            lines.append(f"- {i}: {c}: `{tail[0][:200]}`")
    summary = "\n".join(lines) + "\n"
    print(summary)
    if args.only is not None:
        print(results[str(args.only)].get("stderr", ""))
    if args.out:
        Path(args.out).write_text(summary)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

"""The random sweep's cases by class, geometric mean against cuBLAS and Triton (f16 and bf16):
    python results/2026-12-03-session8/classes.py results/2026-12-03-session8/runB/random.md
Classes, first that applies: M <= 64 (decode, by K: a multiple of 8, even, odd); N <= 64;
K <= 64; N or K not a multiple of 8; the rest."""
import math
import sys


def load(path):
    rows = []
    for line in open(path):
        if not line.startswith("| random"):
            continue
        cells = [x.strip() for x in line.split("|")]
        try:
            m, n, k = map(int, cells[2].split("x"))
            rows.append((m, n, k, float(cells[7]), float(cells[8])))
        except ValueError:           # a refused or wrong case has no ratios
            continue
    return rows


def kind(m, n, k):
    if m <= 64:
        return ("decode, K a multiple of 8" if k % 8 == 0 else
                "decode, K even" if k % 2 == 0 else "decode, K odd")
    if n <= 64:
        return "N <= 64"
    if k <= 64:
        return "K <= 64"
    return "N or K not a multiple of 8" if n % 8 or k % 8 else "the rest"


def geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


for path in sys.argv[1:]:
    rows = load(path)
    print(f"{path}: {len(rows)} timed, {geomean([r[3] for r in rows]):.3f}x cuBLAS, "
          f"{geomean([r[4] for r in rows]):.3f}x Triton")
    by = {}
    for r in rows:
        by.setdefault(kind(*r[:3]), []).append(r)
    for name, group in sorted(by.items()):
        print(f"  {name:28s} {len(group):3d}  {geomean([r[3] for r in group]):.3f}x cuBLAS  "
              f"{geomean([r[4] for r in group]):.3f}x Triton")

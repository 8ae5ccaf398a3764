"""The front door's pick against what a run timed (default runB/midsize-tiles.md; or the
table given, e.g. runF/small-m-split.md): for each row, the label of the heuristic's
configuration among the timed ones (SMS ignored) and its ratio to cuBLAS in that run, against
the heuristic of the tree that ran and the best timed. Run from the tree's root, CPU only."""
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))
from tilemlir.kernels.gemm import choose_config  # noqa: E402

TABLE = Path(sys.argv[1]) if len(sys.argv) > 1 else \
    Path(__file__).parent / "runB" / "midsize-tiles.md"


def label(c):
    split = c.get("SPLIT_K", 1)
    if c["KERNEL"] == "hgemm_v6" and (c["BM"], c["BN"]) == (64, 128) and split == 1:
        return "v6-64x128"
    if c["KERNEL"] == "hgemm_v6" and c["BM"] == 128 and split > 1:
        return f"v6-{c['BN']}-s{split}"
    if c["KERNEL"] == "hgemm_v8" and (c["BM"], c["BN"]) == (128, 256):
        return f"v8-s{split}"
    if c["KERNEL"] != "hgemm_v7" or split > 1:
        return None
    if c["BN"] == 256:
        t = c.get("TAIL_SPLIT", 1)
        return "v7-256" + (f"-t{t}" if t > 1 else "")
    return {192: "v7-192-s4", 320: "v7-320"}[c["BN"]]


lines = [x for x in TABLE.read_text().splitlines() if re.match(r"\| \d+x", x)]
header = [h.strip() for h in TABLE.read_text().splitlines()[0].split("|")[1:-1]]
old, new, best, below = [], [], [], 0
for line in lines:
    cells = [c.strip() for c in line.split("|")[1:-1]]
    (m, n, k), dtype = map(int, cells[0].split("x")), cells[1]
    ratios = {h: float(v) for h, v in zip(header[3:-2], cells[3:-2]) if v != "-"}
    c = choose_config(m, n, k, dtype)
    same = ":".join(f"{x}={v}" for x, v in c.items()
                    if x not in ("KERNEL", "BM", "GROUP_M")) == cells[-1]
    name = None if same else label(c)
    r = ratios["heuristic"] if same else ratios.get(name, float("nan"))
    old.append(ratios["heuristic"]); new.append(r); best.append(max(ratios.values()))
    below += r < 0.95
    print(f"{m}x{n}x{k} {dtype}: the run's heuristic {ratios['heuristic']:.3f}, now {name or 'same'} "
          f"{r:.3f}, best {max(ratios, key=ratios.get)} {max(ratios.values()):.3f}")
g = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
print(f"geometric mean vs cuBLAS: the run's heuristic {g(old):.3f}, now {g(new):.3f}, best {g(best):.3f}"
      f"; rows below 0.95 now: {below} of {len(new)}")

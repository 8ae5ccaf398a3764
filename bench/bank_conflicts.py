"""The static bank-conflict check (tilemlir.check_banks) against ncu, on two kernels that differ
only in the layout of one shared tile.

Each CTA (one warp) copies its 32 x 64 fp16 block of X into shared memory (cooperative 16-byte
chunks), then every lane reads one row of it into registers (16-byte ld.shared: the warp walks
the tile column block by column block) and writes it to Y:

  rows_plain     the tile row-major, unswizzled: the 8 lanes of each phase read the same 16
                 bytes of 8 consecutive 128-byte rows, all in the same 4 banks: 8 wavefronts
                 per phase, 32 per request where 4 would do (28 avoidable);
  rows_swizzled  the same tile 128B-swizzled (mma_shared_layout): the 8 rows' 16-byte chunks
                 land in 8 different groups of 4 banks: 4 wavefronts per request, none avoidable.

Without a GPU it prints the prediction (per request, and summed over the grid):

    python bench/bank_conflicts.py

On a GPU with ncu (Nsight Compute) on the PATH it also profiles both kernels and writes a table
of the prediction against ncu's l1tex__data_bank_conflicts_pipe_lsu_mem_shared and
l1tex__data_pipe_lsu_wavefronts_mem_shared (loads and stores apart):

    python bench/bank_conflicts.py --ncu --out results/2026-12-02-bank-conflicts/ncu.md

(--launch NAME is what ncu runs: one launch of kernel NAME.)
"""

import argparse
import csv
import io
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
import tilemlir.lang as T  # noqa: E402

Tx = T.tile

CTAS = 132
ROWS, COLS = 32, 64
LANE_ROWS = T.TileLayout(T.S[(ROWS, COLS):(1 @ T.laneid, 1)])       # lane l keeps row l
LAYOUTS = {
    "rows_plain": T.TileLayout(T.S[(ROWS, COLS):(COLS, 1)]),
    "rows_swizzled": T.mma_shared_layout("float16", "128B", (ROWS, COLS)),
}
METRICS = {
    "conflicts_ld": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "conflicts_st": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "conflicts": "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
    "wavefronts_ld": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "wavefronts_st": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
}


def kernel(name: str):
    layout = LAYOUTS[name]

    def rows(X: T.Buffer((CTAS * ROWS, COLS), "float16"),
             Y: T.Buffer((CTAS * ROWS, COLS), "float16")):
        pid = T.cta_id([CTAS])
        T.lane_id([32])
        pool = T.SMEMPool()
        tile = pool.alloc((ROWS, COLS), "float16", layout=layout)
        pool.commit()
        r = T.alloc_local((ROWS, COLS), "float16", layout=LANE_ROWS)
        Tx.warp.copy(tile, X[pid * ROWS:pid * ROWS + ROWS, :])
        T.cuda.cta_sync()
        Tx.warp.copy(r, tile)
        Tx.warp.copy(Y[pid * ROWS:pid * ROWS + ROWS, :], r)
    rows.__name__ = name                    # the kernel's name, which ncu's -k picks
    return T.prim_func(rows)


def prediction(name: str) -> dict:
    """The check's figures for kernel `name`, summed over the grid, loads and stores apart."""
    report = tilemlir.check_banks(kernel(name), target="sm_90a")
    figures = {"report": str(report)}
    for kind in ("ld", "st"):
        mine = [a for a in report if (a.instruction.startswith("ld") if kind == "ld"
                                      else not a.instruction.startswith("ld"))]
        figures[f"conflicts_{kind}"] = CTAS * sum(a.conflicts for a in mine)
        figures[f"wavefronts_{kind}"] = CTAS * sum(a.wavefronts for a in mine)
        figures[f"worst_{kind}"] = max(((a.worst, a.worst_ideal) for a in mine), default=(0, 0))
    figures["conflicts"] = figures["conflicts_ld"] + figures["conflicts_st"]
    return figures


def launch(name: str) -> None:
    import torch
    x = torch.randn(CTAS * ROWS, COLS, device="cuda", dtype=torch.float16)
    y = torch.empty_like(x)
    compiled = tilemlir.compile(kernel(name), target="sm_90a")
    compiled(x, y)
    torch.cuda.synchronize()
    assert torch.equal(x, y), f"{name}: Y is not X"


def profile(name: str) -> dict:
    """ncu's figures for one launch of kernel `name`."""
    command = ["ncu", "--clock-control", "none", "--csv", "--metrics",
               ",".join(METRICS.values()), "-k", f"regex:{name}", sys.executable, __file__,
               "--launch", name]
    run = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ))
    if run.returncode:
        raise SystemExit(f"ncu failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
    text = run.stdout[run.stdout.index('"ID"'):]
    values = {row["Metric Name"]: row["Metric Value"] for row in csv.DictReader(io.StringIO(text))}
    return {key: int(float(values[metric].replace(",", ""))) for key, metric in METRICS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ncu", action="store_true", help="profile both kernels with ncu")
    parser.add_argument("--out", type=Path, help="write the table here (with --ncu)")
    parser.add_argument("--launch", choices=sorted(LAYOUTS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.launch:
        launch(args.launch)
        return
    lines = []
    for name in LAYOUTS:
        p = prediction(name)
        print(f"{name}:\n{p['report']}\n")
        row = {"kernel": name, "predicted": p}
        if args.ncu:
            row["ncu"] = profile(name)
        lines.append(row)
    if not args.ncu:
        return
    from bench.report import environment, heading, publish
    table = heading("Static bank-conflict check against ncu", environment()) + [
        "", f"{CTAS} CTAs of one warp; predicted = tilemlir.check_banks x CTAs.", "",
        "| kernel | figure | predicted | ncu |", "| --- | --- | ---: | ---: |"]
    for row in lines:
        for key, metric in METRICS.items():
            table.append(f"| {row['kernel']} | `{metric}` | {row['predicted'][key]} | "
                         f"{row['ncu'][key]} |")
    agree = all(row["predicted"][k] == row["ncu"][k] for row in lines
                for k in ("conflicts_ld", "conflicts_st"))
    table += ["", f"Conflicts predicted exactly: {'yes' if agree else 'no'}."]
    publish("\n".join(table) + "\n", args.out)


if __name__ == "__main__":
    main()

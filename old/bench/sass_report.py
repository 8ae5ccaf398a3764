"""SASS of a Hopper GEMM, without a GPU: opcode counts and the instructions around the HGMMA
chains (consumer main loop) and the UTMALDG issue (producer loop).

    python bench/sass_report.py --kernel hgemm_v6 --out results/2026-11-30-hopper/sass-hgemm-v6.md
"""

import argparse
import collections
import datetime
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import tilemlir  # noqa: E402
from tilemlir.kernels import hgemm_hopper  # noqa: E402
from tilemlir.target.ptx import assemble, disassemble, find_cuda_tool  # noqa: E402

_OPCODE = re.compile(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)")
_SHOWN = ("HGMMA", "UTMALDG", "UTMASTG", "STSM", "SYNCS", "WARPGROUP", "BAR", "LDG", "STG",
          "LDS", "STS")


def report(name: str, m: int, n: int, k: int) -> str:
    kernel = tilemlir.compile(getattr(hgemm_hopper, name)(m, n, k), target="sm_90a")
    sass = disassemble(assemble(kernel.ptx, "sm_90a"))
    ops = collections.Counter(_OPCODE.findall(sass))
    lines = [line.strip() for line in sass.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", line)]
    out = [f"# SASS of {name} ({m}x{n}x{k}, fp16, sm_90a)", "",
           f"- date: {datetime.date.today()}; CPU only: ptxas ({find_cuda_tool('ptxas')}) "
           f"-arch=sm_90a, nvdisasm ({find_cuda_tool('nvdisasm')})",
           f"- command: `python {' '.join(sys.argv)}`; test/python/test_hopper_sass.py checks "
           f"the same counts", "", "| opcode | count |", "|---|---:|"]
    out += [f"| {o} | {ops[o]} |" for o in _SHOWN]
    mma = [i for i, line in enumerate(lines) if "HGMMA" in line]
    tma = [i for i, line in enumerate(lines) if "UTMALDG" in line]
    out += ["", "Around the HGMMA chains (consumer main loop):", "", "```"]
    out += lines[max(0, mma[0] - 12):mma[-1] + 12] + ["```", "",
                                                        "Around the TMA loads (producer loop):",
                                                        "", "```"]
    out += lines[max(0, tma[0] - 14):tma[-1] + 4] + ["```"]
    return "\n".join(out) + "\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--kernel", default="hgemm_v6")
    p.add_argument("--shape", default="8192x8192x8192")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    text = report(args.kernel, *(int(x) for x in args.shape.split("x")))
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()

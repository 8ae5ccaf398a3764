"""The pictures of docs/layouts.md ("who holds what"), drawn from the layouts themselves.

    python docs/layout_pictures.py            # rewrite the pictures in docs/layouts.md
    python docs/layout_pictures.py --check    # exit 1 if a picture there is out of date

Each picture sits between `<!-- picture NAME -->` and `<!-- /picture -->` in the page; the text
between them is replaced by what PICTURES[NAME] draws. test/python/test_docs.py runs --check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

import tilemlir.lang as T
from tilemlir.layout import S, TileLayout, laneid
from tilemlir.layout.plot import holder_threads

PAGE = Path(__file__).with_name("layouts.md")
_BLOCK = re.compile(r"(<!-- picture (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /picture -->)",
                    re.S)


# ------------------------------------------------------------------------------ drawing
def _thread(values: dict, index) -> int:
    """The thread holding an element: its thread axes combined into one CTA thread index."""
    threads = np.asarray(holder_threads(values))
    return int(threads[index]) if threads.ndim else int(threads)


def _grid(cells: list[list[str]], row_label="row", col_label="col") -> str:
    width = max(len(c) for row in cells for c in row)
    label = f"{row_label}\\{col_label}"
    lines = [label + " " + " ".join(str(c).rjust(width) for c in range(len(cells[0])))]
    for r, row in enumerate(cells):
        lines.append(str(r).rjust(len(label)) + " " + " ".join(c.rjust(width) for c in row))
    return "\n".join(lines)


def registers(layout: TileLayout, shape, rows=None) -> str:
    """Each element as `Tt:s`: thread t holds it in its register slot s."""
    values = layout.evaluate_all(shape)
    slot = values.get("m")              # an axis the layout does not name reads 0
    nrows = shape[0] if rows is None else rows
    cells = [[f"T{_thread(values, (r, c))}:{0 if slot is None else int(slot[r, c])}"
              for c in range(shape[1])] for r in range(nrows)]
    return _grid(cells)


def memory(layout: TileLayout, shape) -> str:
    """Each element's offset in memory (the "m" value, after any swizzle)."""
    m = layout.evaluate_all(shape)["m"]
    return _grid([[str(int(m[r, c])) for c in range(shape[1])] for r in range(shape[0])])


def swizzle_chunks(layout: TileLayout, shape, chunk: int) -> str:
    """For each row and 16-byte chunk of it (`chunk` elements): the chunk of the row's 128 bytes
    of memory it lands in."""
    m = layout.evaluate_all(shape)["m"]
    row_elems = shape[1]
    cells = [[str(int(m[r, c]) % row_elems // chunk) for c in range(0, shape[1], chunk)]
             for r in range(shape[0])]
    return _grid(cells, col_label="chunk")


def _spans(numbers: list[int]) -> str:
    """1, 2, 3, 5 -> '1-3, 5'."""
    out, start = [], None
    for i, n in enumerate(numbers):
        if start is None:
            start = n
        if i + 1 == len(numbers) or numbers[i + 1] != n + 1:
            out.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ", ".join(out)


def holders(layout: TileLayout, what: str) -> str:
    """Each element of a (replicated) vector: its register slot and every thread holding it."""
    lines = []
    for i in range(layout.size()):
        copies = layout.holders(i)
        threads = sorted({_thread({k: [v] for k, v in h.items()}, 0) for h in copies})
        slots = sorted({h.get("m", 0) for h in copies})
        lines.append(f"{what} {i:>2}: slot {', '.join(map(str, slots))} in threads "
                     f"{', '.join(f'T{t}' for t in threads)}")
    return "\n".join(lines)


def tmem_rows(layout: TileLayout, shape) -> str:
    """Row ranges of a tensor-memory tile and the TMEM lanes (and columns) they occupy."""
    values = layout.evaluate_all(shape)
    lanes = values["TLane"][:, 0].tolist()
    lines, start = [], 0
    for r in range(1, len(lanes) + 1):
        if r == len(lanes) or lanes[r] != lanes[r - 1] + 1:
            cols = values["TCol"][start]
            lines.append(f"rows {start:>3}-{r - 1:<3} -> TLane {lanes[start]:>3}-{lanes[r - 1]:<3}"
                         f" TCol {int(cols.min())}-{int(cols.max())}")
            start = r
    return "\n".join(lines)


# ------------------------------------------------------------------------------ the pictures
def _shown(code: str, layout: TileLayout, body: str) -> str:
    return f"{code}\n    = {layout}\n\n{body}"


def _row_major():
    layout = TileLayout(S[(4, 8):(8, 1)])
    return _shown("TileLayout(S[(4, 8):(8, 1)])   # a (4, 8) tile in memory, row-major",
                  layout, memory(layout, (4, 8)))


def _one_per_lane():
    layout = TileLayout(S[(4, 8):(8 @ laneid, 1 @ laneid)])
    return _shown("TileLayout(S[(4, 8):(8 @ laneid, 1 @ laneid)])   # one element per lane",
                  layout, registers(layout, (4, 8)))


def _pairs_per_lane():
    layout = TileLayout(S[(4, 4, 2):(4 @ laneid, 1 @ laneid, 1)])
    return _shown("TileLayout(S[(4, 4, 2):(4 @ laneid, 1 @ laneid, 1)])   # two per lane",
                  layout, registers(layout, (4, 8)))


def _mma_c():
    layout = T.MmaSync(16).c_layout()
    return _shown("T.MmaSync(16).c_layout()   # mma.sync m16n8: C and D, 16 x 8 f32",
                  layout, registers(layout, (16, 8)))


def _mma_a():
    a, _, _ = T.MmaSync(16).fragments(16, 8, 16)
    return _shown("a, b, c = T.MmaSync(16).fragments(16, 8, 16)   # A: 16 x 16 f16", a,
                  registers(a, (16, 16)))


def _mma_b():
    _, b, _ = T.MmaSync(16).fragments(16, 8, 16)
    return _shown("a, b, c = T.MmaSync(16).fragments(16, 8, 16)   # B: 16 x 8 (K x N)", b,
                  registers(b, (16, 8)))


def _wgmma_acc():
    layout = T.wgmma_accumulator_layout(64, 16)
    values = layout.evaluate_all((64, 16))
    rest = [f"rows {r}-{r + 15} in T{min(ts)}-T{max(ts)}" for r in range(16, 64, 16)
            for ts in [[_thread(values, (i, c)) for i in range(r, r + 16) for c in range(16)]]]
    return _shown("T.wgmma_accumulator_layout(64, 16)   # the first 16 rows", layout,
                  registers(layout, (64, 16), rows=16) + "\n... and below: "
                  + ", ".join(rest))


def _row_vector():
    layout = T.MmaSync(16).c_layout().row_vector((16, 8))
    return _shown("T.MmaSync(16).c_layout().row_vector((16, 8))   # a bias: one per column",
                  layout, holders(layout, "column"))


def _column_vector():
    layout = T.MmaSync(16).c_layout().column_vector((16, 8))
    return _shown("T.MmaSync(16).c_layout().column_vector((16, 8))   # a row max: one per row",
                  layout, holders(layout, "row"))


def _swizzle_128b():
    layout = T.mma_shared_layout("float16", "128B", (8, 64))
    return _shown('T.mma_shared_layout("float16", "128B", (8, 64))   # 8 rows of 128 bytes',
                  layout, swizzle_chunks(layout, (8, 64), 8))


def _tmem_m64():
    layout = T.tcgen05_accumulator_layout(64, 32)
    return _shown("T.tcgen05_accumulator_layout(64, 32)   # M = 64: half the datapath",
                  layout, tmem_rows(layout, (64, 32)))


PICTURES = {
    "row-major": _row_major,
    "one-per-lane": _one_per_lane,
    "pairs-per-lane": _pairs_per_lane,
    "mma-c": _mma_c,
    "mma-a": _mma_a,
    "mma-b": _mma_b,
    "wgmma-acc": _wgmma_acc,
    "row-vector": _row_vector,
    "column-vector": _column_vector,
    "swizzle-128b": _swizzle_128b,
    "tmem-m64": _tmem_m64,
}


def render(text: str) -> str:
    """The page with every picture block redrawn; a block naming no picture is an error."""
    def redraw(match):
        name = match["name"]
        if name not in PICTURES:
            raise KeyError(f"{PAGE.name}: no picture named {name!r}")
        return f"{match[1]}```text\n{PICTURES[name]()}\n```\n{match[4]}"
    return _BLOCK.sub(redraw, text)


def main(argv: list[str]) -> int:
    text = PAGE.read_text()
    drawn = render(text)
    if "--check" in argv:
        if drawn != text:
            print(f"{PAGE} has out-of-date pictures: run python docs/layout_pictures.py")
            return 1
        return 0
    PAGE.write_text(drawn)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Pictures of layouts: which thread and register holds each element of a register tile, which
lane and column of tensor memory, or which of the 32 shared-memory banks each element of a
shared tile uses (CuTe's print_latex, TileLang's plot_layout).

    >>> from tilemlir.layout import parse_layout
    >>> print(layout_text(parse_layout("S[(2, 4):(1@laneid, 2)]"), (2, 4)))
    registers: S[(2, 4):(1@laneid, 2)]
    thread T and register slot r of each element
    <BLANKLINE>
          0    1    2    3
     0 T0:0 T0:2 T0:4 T0:6
     1 T1:0 T1:2 T1:4 T1:6

`plot_layout` draws the same as an SVG when matplotlib is installed (a colour per thread, or
per bank), and falls back to the text.
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass

import numpy as np

from .axes import MEMORY
from .errors import LayoutError
from .tile_layout import TileLayout

BANKS = 32
BANK_BYTES = 4
# What each thread axis adds to the thread's index in its CTA.
_THREAD_WEIGHTS = {"laneid": 1, "wid_in_wg": 32, "warpid": 32, "tid_in_wg": 1, "wgid": 128,
                   "tx": 1}


@dataclass(frozen=True)
class LayoutPicture:
    """What to draw: per element (rows x columns) a label and a colour index."""
    kind: str                   # "registers", "shared", "tmem"
    title: str
    legend: str
    labels: np.ndarray          # str, (rows, columns)
    colours: np.ndarray         # int, (rows, columns)


def holder_threads(values: dict):
    """The thread of its CTA holding each element, from a layout's values on the thread axes
    (an axis it does not name reads 0): an array like the values, or 0."""
    return sum(np.asarray(values[a]) * w for a, w in _THREAD_WEIGHTS.items() if a in values)


def _kind(layout: TileLayout, kind: str | None) -> str:
    axes = layout.axes()
    found = "tmem" if "TLane" in axes or "TCol" in axes else \
        "registers" if any(a in _THREAD_WEIGHTS for a in axes) else "shared"
    if kind is None:
        return found
    if kind not in ("registers", "shared", "tmem"):
        raise LayoutError(f"kind must be 'registers', 'shared' or 'tmem', got {kind!r}")
    return kind


def picture(layout: TileLayout, shape, elem_bits: int = 16,
            kind: str | None = None) -> LayoutPicture:
    """The labels and colours of `layout` over a tile of `shape` (more than two dims are
    drawn as rows of the last one)."""
    if not isinstance(layout, TileLayout):
        raise LayoutError(f"layout must be a TileLayout, got {type(layout).__name__}")
    dims = layout.checked_shape(shape)
    grid = (1, dims[0]) if len(dims) == 1 else (math.prod(dims[:-1]), dims[-1])
    values = layout.evaluate_all(dims)
    zero = np.zeros(dims, np.int64)
    kind = _kind(layout, kind)
    copies = math.prod(it.extent for it in layout.replica)
    replicas = f"; each element is also held by {copies - 1} replicas " \
               f"({', '.join(str(it) for it in layout.replica)})" if layout.replica else ""
    if kind == "registers":
        thread = np.broadcast_to(holder_threads(values), dims)
        slot = values.get(MEMORY, zero)
        labels = np.char.add(np.char.add("T", thread.astype(str)),
                             np.char.add(":", slot.astype(str)))
        return LayoutPicture(kind, f"registers: {layout}",
                             f"thread T and register slot r of each element{replicas}",
                             labels.reshape(grid), (thread % 8).reshape(grid))
    if kind == "tmem":
        lane, col = values.get("TLane", zero), values.get("TCol", zero)
        labels = np.char.add(np.char.add("L", lane.astype(str)), np.char.add(":", col.astype(str)))
        return LayoutPicture(kind, f"tensor memory: {layout}",
                             "lane L and column of each element", labels.reshape(grid),
                             (lane // 32 * 4 + col % 4).reshape(grid))
    if elem_bits % 8 or elem_bits < 8:
        raise LayoutError(f"banks of {elem_bits}-bit elements: give a whole number of bytes")
    offset = values.get(MEMORY, zero)
    bank = offset * (elem_bits // 8) // BANK_BYTES % BANKS
    return LayoutPicture(kind, f"shared memory, {elem_bits}-bit elements: {layout}",
                         f"bank of each element (4-byte banks, {BANKS} of them){replicas}",
                         bank.astype(str).reshape(grid), bank.reshape(grid))


def layout_text(layout: TileLayout, shape, elem_bits: int = 16, kind: str | None = None) -> str:
    """The picture as a text table: a row per tile row, a column per element."""
    p = picture(layout, shape, elem_bits, kind)
    rows, cols = p.labels.shape
    width = max(max(len(s) for s in p.labels.reshape(-1)), len(str(cols - 1))) + 1
    head = len(str(rows - 1)) + 1
    lines = [p.title, p.legend, "",
             " " * head + "".join(f"{c:>{width}}" for c in range(cols))]
    for r in range(rows):
        lines.append(f"{r:>{head}}" + "".join(f"{s:>{width}}" for s in p.labels[r]))
    return "\n".join(lines)


def layout_svg(layout: TileLayout, shape, elem_bits: int = 16, kind: str | None = None) -> str:
    """The picture as an SVG (needs matplotlib): a coloured cell per element."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    p = picture(layout, shape, elem_bits, kind)
    rows, cols = p.labels.shape
    if p.kind == "shared":                      # 32 banks: tab20 and the first 12 of tab20b
        colours = [plt.get_cmap("tab20")(i) for i in range(20)] + \
            [plt.get_cmap("tab20b")(i) for i in range(12)]
    else:
        colours = [plt.get_cmap("Pastel2")(i) for i in range(8)]
    cell = 0.36 if p.kind == "shared" else 0.62
    fig, ax = plt.subplots(figsize=(max(4.0, cols * cell + 1.0), max(1.6, rows * 0.3 + 1.2)))
    ax.imshow(np.array(colours)[p.colours % len(colours)], extent=(0, cols, rows, 0),
              interpolation="nearest", aspect="auto")
    for r in range(rows):
        for c in range(cols):
            ax.text(c + 0.5, r + 0.5, p.labels[r, c], ha="center", va="center",
                    fontsize=5.5 if p.kind == "shared" else 6, family="monospace")
    ax.set_xlim(0, cols)
    ax.set_ylim(rows, 0)
    ax.set_xticks(np.arange(cols) + 0.5, [str(c) for c in range(cols)], fontsize=6)
    ax.set_yticks(np.arange(rows) + 0.5, [str(r) for r in range(rows)], fontsize=6)
    ax.tick_params(length=0)
    ax.xaxis.tick_top()
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(f"{p.title}\n{p.legend}", fontsize=7, loc="left")
    fig.tight_layout()
    out = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "tilemlir"}):
        fig.savefig(out, format="svg", metadata={"Date": None})     # text stays text
    plt.close(fig)
    # One monospace family per label, not matplotlib's ten fallbacks, and no rotation by 0:
    # half of the file.
    svg = re.sub(r"font-family: [^;\"]*monospace", "font-family: monospace", out.getvalue())
    return re.sub(r' transform="rotate\(-0 [^"]*\)"', "", svg)


def plot_layout(layout: TileLayout, shape, elem_bits: int = 16, *, kind: str | None = None,
                path=None, format: str = "auto") -> str:
    """Which thread and register holds each element of a register layout (tensor memory: lane
    and column), or which bank each element of a shared-memory layout uses (`elem_bits` wide).
    format "svg" draws it with matplotlib, "text" as a table, "auto" the SVG when matplotlib is
    installed; the SVG or the text is returned, and written to `path` when given. `kind`
    ("registers", "shared", "tmem") overrides what the layout's axes say."""
    if format not in ("auto", "svg", "text"):
        raise LayoutError(f"format must be 'auto', 'svg' or 'text', got {format!r}")
    if format == "auto":
        try:
            import matplotlib  # noqa: F401
            format = "svg"
        except ImportError:
            format = "text"
    result = layout_svg(layout, shape, elem_bits, kind) if format == "svg" else \
        layout_text(layout, shape, elem_bits, kind) + "\n"
    if path is not None:
        with open(path, "w") as f:
            f.write(result)
    return result

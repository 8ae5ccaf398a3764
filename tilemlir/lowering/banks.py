"""Shared-memory bank conflicts of the copies dispatch chooses, predicted without a GPU.

Shared memory has 32 banks of 4-byte words (word w is in bank w % 32). A warp's request (one
instruction) is served in *wavefronts*, each reaching at most one word per bank; threads on the
same word share it. A request moving s bytes per thread is cut into phases of 128 bytes (s <= 4:
the 32 threads at once; 8 bytes: two phases of 16 threads; 16 bytes, as ld.shared.v4, cp.async
and every row of an ldmatrix or stmatrix: four phases of 8 threads), each at least one wavefront,
and as many as the most distinct words it needs from one bank. Wavefronts beyond one per phase
are bank conflicts: what ncu counts as l1tex__data_bank_conflicts_pipe_lsu_mem_shared.

The variants that move data between registers and shared memory, or into it (ldmatrix,
stmatrix, vector ld/st, cooperative copies, cp.async), call `note` with each instruction's
per-thread offsets once they have planned them. `check_banks` dispatches each copy of a module
on its own, as the tile-dispatch pass would (building no IR), with a recorder listening, and
reports every shared-memory access: the worst request's wavefronts against the ideal, and the
total per execution of the op.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass, replace

import numpy as np
from mlir import ir

from tilemlir.analysis.alignment import dynamic_multiple
from tilemlir.ir.locations import python_line
from tilemlir.ir.windows import BufferRef

BANKS = 32
WORD = 4
PHASE_BYTES = 128
# The primitives whose variants plan per-thread shared-memory accesses.
_CHECKED = ("tile.copy", "tile.copy_masked", "tile.copy_async", "tile.copy_async_masked",
            "tile.reduce")

_RECORDER: contextvars.ContextVar[list | None] = contextvars.ContextVar("bank_notes",
                                                                          default=None)


@dataclass(frozen=True)
class Note:
    """Accesses a variant planned: `rows[j][t]`, instruction j's pre-swizzle element offset for
    thread t (static_base included), moving `widths[j]` elements; `active[j][t]`: whether
    instruction j uses thread t's address (ldmatrix.x1 only the first 8 lanes')."""
    ref: BufferRef
    rows: tuple
    widths: tuple[int, ...]
    active: tuple
    write: bool
    matrices: tuple[int, ...] | None      # ldmatrix / stmatrix: matrices per instruction


def note(ref: BufferRef, rows, widths, write: bool, active=None, matrices=None) -> None:
    """Called by the variants: record the planned accesses of a shared buffer when
    `check_banks` listens (else nothing). `widths`, `active`: one for every instruction, or a
    list; `matrices`: the 8x8 matrices of each ldmatrix / stmatrix instruction."""
    recorder = _RECORDER.get()
    if recorder is None or ref.scope != "shared":
        return
    rows = tuple(np.asarray(r, np.int64) for r in rows)
    widths = tuple(int(w) for w in (widths if np.ndim(widths) else [widths] * len(rows)))
    if matrices is not None:           # lane l supplies a row of matrix l % 32 / 8
        active = [np.arange(len(r)) % 32 < 8 * m for r, m in zip(rows, matrices)]
    elif active is None or np.ndim(active[0]) == 0:
        active = [np.ones(len(r), bool) if active is None else np.asarray(active, bool)
                  for r in rows]
    recorder.append(Note(ref, rows, widths, tuple(np.asarray(a, bool) for a in active), write,
                         tuple(matrices) if matrices is not None else None))


@contextlib.contextmanager
def recording():
    notes: list[Note] = []
    token = _RECORDER.set(notes)
    try:
        yield notes
    finally:
        _RECORDER.reset(token)


def wavefronts(starts: np.ndarray, size: int) -> tuple[int, int]:
    """(wavefronts, ideal) of one warp's request: each thread moves `size` bytes from byte
    `starts[t]` (threads in lane order)."""
    per_phase = max(1, min(32, PHASE_BYTES // max(size, WORD)))
    spans = np.arange(0, max(size, 1), WORD)
    total = ideal = 0
    for p in range(0, len(starts), per_phase):
        words = np.unique((starts[p:p + per_phase, None] + spans) // WORD)
        if not len(words):
            continue
        total += int(np.bincount(words % BANKS, minlength=BANKS).max())
        ideal += 1
    return total, ideal


@dataclass(frozen=True)
class BankAccess:
    """One kind of shared-memory instruction of one op, per execution of the op."""
    where: str                      # the op's Python line (file:line)
    op: str
    variant: str
    instruction: str                # e.g. "ldmatrix.x4", "st.shared.v4 (16 B)"
    buffer: str                     # the shared buffer's type
    requests: int                   # instructions x warps
    worst: int                      # wavefronts of the worst request
    worst_ideal: int
    wavefronts: int                 # of all requests
    ideal: int
    assumption: str | None = None   # what the prediction takes for granted
    ops: int = 1                    # ops of this line with these accesses (unrolled loops)

    @property
    def conflicts(self) -> int:
        """Wavefronts beyond the ideal, per execution of the op."""
        return self.wavefronts - self.ideal

    def __str__(self) -> str:
        return f"{self.where}: {self.describe()}"

    def describe(self) -> str:
        """What __str__ says after the Python line."""
        ops = f" x {self.ops} ops" if self.ops > 1 else ""
        text = (f"{self.op}{ops} ({self.variant}: {self.instruction}) on "
                f"{self.buffer}: worst request {self.worst} wavefronts, ideal "
                f"{self.worst_ideal}; {self.requests} requests, {self.wavefronts} wavefronts, "
                f"ideal {self.ideal} ({self.conflicts} avoidable)")
        return text + (f" [{self.assumption}]" if self.assumption else "")


class BankReport(list):
    """The BankAccess of every shared-memory copy of a kernel."""

    @property
    def conflicts(self) -> int:
        return sum(a.conflicts for a in self)

    def __str__(self) -> str:
        if not self:
            return "no shared-memory copies with a per-thread plan (ldmatrix, stmatrix, " \
                   "vector ld/st, cooperative, cp.async)"
        return "\n".join(str(a) for a in self)


def _root_offset(ref: BufferRef) -> int:
    owner = ref.root.owner
    if "offset" in owner.attributes:
        return ir.IntegerAttr(owner.attributes["offset"]).value
    return 0


def _instruction(variant: str, write: bool, size: int, matrices: int | None) -> str:
    if matrices is not None:
        return f"{variant}.x{matrices}"
    if variant == "cp_async":
        return f"cp.async ({size} B)"
    if variant == "cross_warp":
        return f"{'st' if write else 'ld'}.shared of the reduction's partials ({size} B)"
    vector = "" if size <= 4 else f".v{size // 4}"
    return f"{'st' if write else 'ld'}.shared{vector} ({size} B)"


def accesses_of(note_: Note, where: str, op: str, variant: str) -> list[BankAccess]:
    """The BankAccess of a variant's note, one per instruction kind."""
    ref = note_.ref
    elem_bytes = max(ref.type.elem_bits // 8, 1)
    sw = ref.layout.swizzle
    base = _root_offset(ref)
    multiple = dynamic_multiple(ref)
    assumption = None
    if multiple and ((multiple * elem_bytes) % PHASE_BYTES
                     or (sw is not None and multiple % sw.period)):
        assumption = (f"taking the dynamic offset (a multiple of {multiple} elements) as 0, "
                      f"where it may move accesses across banks")
    groups: dict[str, dict] = {}
    matrices = note_.matrices or (None,) * len(note_.rows)
    for row, width, active, count in zip(note_.rows, note_.widths, note_.active, matrices):
        offsets = sw.apply(row) if sw is not None else row
        starts = base + offsets * elem_bytes
        size = width * elem_bytes
        name = _instruction(variant, note_.write, size, count)
        g = groups.setdefault(name, dict(requests=0, worst=(-1, 0, 0), wavefronts=0, ideal=0))
        for w in range(0, len(starts), 32):
            used = starts[w:w + 32][active[w:w + 32]]
            if not len(used):
                continue
            got, best = wavefronts(used, size)
            g["requests"] += 1
            g["worst"] = max(g["worst"], (got - best, got, best))
            g["wavefronts"] += got
            g["ideal"] += best
    return [BankAccess(where, op, variant, name, ref.type.describe(), g["requests"],
                       g["worst"][1], g["worst"][2], g["wavefronts"], g["ideal"], assumption)
            for name, g in groups.items()]


def check_banks(root: ir.Operation, target) -> BankReport:
    """Every shared-memory access the copies under `root` would make, dispatched for `target`
    as tile-dispatch would (copies it cannot dispatch are left to its diagnostics). The
    variants must be loaded (tilemlir.lowering.cuda.load_variants)."""
    from tilemlir.dispatch.context import DispatchContext
    from tilemlir.dispatch.dispatcher import DispatchFailure, choose_variant
    from tilemlir.ir.types import is_buffer_type, parse_buffer_type

    copies = []

    def visit(op):
        if op.name in _CHECKED and any(
                is_buffer_type(v.type) and parse_buffer_type(v.type).scope == "shared"
                for v in op.operands):
            copies.append(op)
        return ir.WalkResult.ADVANCE
    root.walk(visit)
    merged: dict = {}              # ops of one line with the same accesses (unrolled) as one
    for op in copies:
        with recording() as notes:
            try:
                variant, _ = choose_variant(DispatchContext(op, target))
            except DispatchFailure:
                continue
        for n in notes:
            for a in accesses_of(n, python_line(op) or op.name, op.name, variant.name):
                key = (a.where, a.op, a.variant, a.instruction, a.buffer, a.assumption)
                same = merged.get(key)
                if same is not None:
                    worse = max((same, a), key=lambda x: (x.worst - x.worst_ideal, x.worst))
                    a = replace(same, requests=same.requests + a.requests, ops=same.ops + 1,
                                wavefronts=same.wavefronts + a.wavefronts,
                                ideal=same.ideal + a.ideal, worst=worse.worst,
                                worst_ideal=worse.worst_ideal)
                merged[key] = a
    return BankReport(merged.values())

"""The interpreter's race detector: happens-before over shared memory, by vector clocks.

Agents, each a column of every vector clock of a cluster's run:
- every warp (its generic-proxy loads and stores; the lanes of a warp are taken to be ordered
  with each other, so races inside a warp are not seen);
- every mbarrier, whose clock counts its completed phases: a TMA load's writes land in the
  phase its bytes complete, so only a thread that acquired that phase (or learnt of it through
  later synchronisation) is ordered after them;
- every warpgroup's wgmma: its k-th gemm_async reads shared memory until a wgmma.wait_group
  retires group k;
- every thread's bulk copies (TMA stores) and cp.async copies, until its wait_group retires them.

Only warps hold clocks (a row each). A release (an mbarrier arrive, a named-barrier arrival, an
async copy's issue) joins the releasing warps' clocks into the synchronisation object and ticks
them; an acquire (a completed wait) joins the object's clock into the waiting warps'. Shared
memory keeps, per byte, its last write (agent, clock, Python line) and every agent's last read;
an access that the current agent's clock does not order after a conflicting one is a RaceError
naming both lines. An async-proxy read (wgmma, TMA store) of a generic write also needs a
fence.proxy.async by the writing warp between the write and the release that ordered it.
"""

from __future__ import annotations

import numpy as np

from tilemlir.reference.memory import InterpretError


class RaceError(InterpretError):
    """Two accesses to the same shared-memory byte, at least one a write, that no barrier,
    mbarrier phase, TMA completion or wait_group orders; the message names both Python lines."""


class Clocks:
    """The vector clocks of one cluster's warps, and the names of every agent."""

    def __init__(self, warp_names: list[str]):
        self.warps = len(warp_names)
        self.names = list(warp_names)
        self.units: list[str | None] = [None] * self.warps    # what an agent's clock counts
        self.cap = max(64, 2 * self.warps)
        self.rows = np.zeros((self.warps, self.cap), np.int64)
        self.rows[np.arange(self.warps), np.arange(self.warps)] = 1
        self.fences: list[list[int]] = [[] for _ in range(self.warps)]

    def agent(self, name: str, unit: str) -> int:
        """A new agent column; its clock counts `unit`s ("phase": an mbarrier's completed
        phases; "group": async groups)."""
        self.names.append(name)
        self.units.append(unit)
        if len(self.names) > self.cap:
            self.cap *= 2
            self.rows = self.fit_rows(self.rows)
        return len(self.names) - 1

    def fit(self, vector: np.ndarray | None) -> np.ndarray:
        if vector is None:
            return np.zeros(self.cap, np.int64)
        if len(vector) < self.cap:
            return np.concatenate([vector, np.zeros(self.cap - len(vector), np.int64)])
        return vector

    def fit_rows(self, rows: np.ndarray) -> np.ndarray:
        return np.pad(rows, ((0, 0), (0, self.cap - rows.shape[1])))

    def of(self, warps) -> np.ndarray:
        """The join of `warps`' clocks (what an op they issue together is ordered after)."""
        return self.rows[warps].max(axis=0)

    def release(self, vector: np.ndarray | None, warps) -> np.ndarray:
        """`vector` joined with `warps`' clocks, which then tick (their later accesses are not
        covered by what they released)."""
        warps = np.asarray(warps)
        joined = np.maximum(self.fit(vector), self.of(warps))
        self.rows[warps, warps] += 1
        return joined

    def acquire(self, warps, vector: np.ndarray | None) -> None:
        if vector is not None:
            warps = np.asarray(warps)
            self.rows[warps] = np.maximum(self.rows[warps], self.fit(vector)[None])

    def learn(self, warps, agent: int, clock: int) -> None:
        """`warps` are now ordered after `agent`'s work up to `clock` (a wait_group)."""
        warps = np.asarray(warps)
        self.rows[warps, agent] = np.maximum(self.rows[warps, agent], clock)

    def fence(self, warps) -> None:
        """fence.proxy.async: the warps' generic writes so far become visible to the async
        proxy once a release carries them."""
        for w in np.asarray(warps).tolist():
            self.fences[w].append(int(self.rows[w, w]))
            self.rows[w, w] += 1

    def fenced(self, warp: int, written: int, known: int) -> bool:
        """Whether `warp` fenced after its write at clock `written` and before the release
        that told the reader its clock `known`."""
        return any(written <= f < known for f in self.fences[warp])


class Shadow:
    """Per byte of one CTA's shared memory: its last write and each agent's last read."""

    def __init__(self, nbytes: int, what: str):
        self.what = what
        self.w_agent = np.full(nbytes, -1, np.int32)
        self.w_clock = np.zeros(nbytes, np.int32)
        self.w_loc = np.zeros(nbytes, np.int32)
        self.w_generic = np.zeros(nbytes, bool)
        self.readers: list[int] = []
        self.r_clock = np.zeros((0, nbytes), np.int32)      # rows for readers, grown by 4
        self.r_loc = np.zeros((0, nbytes), np.int32)
        self.buffers: list[tuple[int, int, str]] = []     # (start, end, where allocated)

    def reader_row(self, agent: int) -> int:
        if agent not in self.readers:
            self.readers.append(agent)
            if len(self.readers) > len(self.r_clock):
                more = np.zeros((4, self.r_clock.shape[1]), np.int32)
                self.r_clock = np.concatenate([self.r_clock, more])
                self.r_loc = np.concatenate([self.r_loc, more])
        return self.readers.index(agent)

    def describe(self, byte: int) -> str:
        where = ""
        for start, end, loc in self.buffers:
            if start <= byte < end:
                where = f" (byte {byte - start} of the buffer allocated at {loc})"
        return f"byte {byte} of {self.what}{where}"


class Races:
    """The shadows of a cluster's shared memories and the table of Python lines."""

    def __init__(self, clocks: Clocks):
        self.clocks = clocks
        self.shadows: dict[int, Shadow] = {}
        self.locs: list[str] = [""]
        self._loc_ids: dict[str, int] = {}

    def shadow(self, storage, what: str) -> Shadow:
        key = id(storage)
        if key not in self.shadows:
            self.shadows[key] = Shadow(storage.data.shape[1], what)
        return self.shadows[key]

    def loc(self, text: str) -> int:
        if text not in self._loc_ids:
            self._loc_ids[text] = len(self.locs)
            self.locs.append(text)
        return self._loc_ids[text]

    # ------------------------------------------------------------------ accesses
    def read(self, shadow: Shadow, bytes_: np.ndarray, agent: int, clock: int,
             known: np.ndarray, loc: int, what: str, async_proxy: bool = False) -> None:
        """A read of `bytes_` by `agent` (its access's clock `clock`), issued by threads whose
        clock is `known`."""
        if not len(bytes_):
            return
        known = self.clocks.fit(known)
        self._after_write(shadow, bytes_, agent, known, loc, what, "read")
        if async_proxy:
            self._fenced(shadow, bytes_, known, loc, what)
        row = shadow.reader_row(agent)
        shadow.r_clock[row, bytes_] = clock
        shadow.r_loc[row, bytes_] = loc

    def write(self, shadow: Shadow, bytes_: np.ndarray, agent: int, clock: int,
              known: np.ndarray, loc: int, what: str, generic: bool) -> None:
        """A write of `bytes_` that becomes visible as (`agent`, `clock`), issued by threads
        whose clock is `known`."""
        if not len(bytes_):
            return
        known = self.clocks.fit(known)
        self._after_write(shadow, bytes_, agent, known, loc, what, "write")
        if shadow.readers:
            reads = shadow.r_clock[:len(shadow.readers), bytes_]
            readers = np.array(shadow.readers)
            late = (reads > known[readers][:, None]) & (readers != agent)[:, None]
            if late.any():
                row, i = np.argwhere(late)[0]
                self._report(shadow, int(bytes_[i]), what, "write", loc,
                             int(shadow.r_loc[row, bytes_[i]]), int(readers[row]),
                             int(reads[row, i]), "read")
            shadow.r_clock[:, bytes_] = 0
        shadow.w_agent[bytes_] = agent
        shadow.w_clock[bytes_] = clock
        shadow.w_loc[bytes_] = loc
        shadow.w_generic[bytes_] = generic

    def _after_write(self, shadow, bytes_, agent, known, loc, what, kind) -> None:
        writers = shadow.w_agent[bytes_]
        written = writers >= 0
        if not written.any():
            return
        clocks = shadow.w_clock[bytes_]
        late = written & (clocks > known[np.where(written, writers, 0)]) & (writers != agent)
        if late.any():
            i = int(np.flatnonzero(late)[0])
            self._report(shadow, int(bytes_[i]), what, kind, loc, int(shadow.w_loc[bytes_[i]]),
                         int(writers[i]), int(clocks[i]), "write")

    def _fenced(self, shadow, bytes_, known, loc, what) -> None:
        writers = shadow.w_agent[bytes_]
        generic = shadow.w_generic[bytes_] & (writers >= 0)
        if not generic.any():
            return
        codes = writers[generic].astype(np.int64) << 32 | shadow.w_clock[bytes_][generic]
        for code in np.unique(codes).tolist():
            warp, written = code >> 32, code & 0xFFFFFFFF
            if not self.clocks.fenced(warp, written, int(known[warp])):
                byte = int(bytes_[generic][np.flatnonzero(codes == code)[0]])
                raise RaceError(
                    f"this async-proxy read, {what}, of {shadow.describe(byte)} comes after the "
                    f"generic-proxy write at {self.locs[shadow.w_loc[byte]]} "
                    f"({self.clocks.names[warp]}) with no fence.proxy.async by the writing warp "
                    f"between the write and the barrier that orders the two")

    def _report(self, shadow, byte, what, kind, loc, other_loc, other_agent, other_clock,
                other_kind) -> None:
        raise RaceError(
            f"data race on {shadow.describe(byte)}: this {kind}, {what}, and the {other_kind} "
            f"at {self.locs[other_loc]} ({self.clocks.names[other_agent]}"
            f"{_epoch(other_agent, other_clock, self.clocks)}) are not ordered by a barrier, "
            f"an mbarrier phase, a TMA completion or a wait_group")


def _epoch(agent: int, clock: int, clocks: Clocks) -> str:
    unit = clocks.units[agent]
    if unit == "phase":
        return f", phase {clock - 1}"
    return f", group {clock}" if unit else ""

"""How the interpreter runs the threads of a cluster: groups of threads in lockstep, each a
coroutine with its own continuation, that split where their threads diverge and block where
they wait.

A *strand* is a group of threads of one CTA that run the same op at the same time; every SSA
value is a numpy vector with one entry per thread of the CTA, and a strand writes only its own
threads' entries, so strands that run the same code at different times share the vectors. A
strand's continuation is a stack of frames (the region it is in, the next op, a loop's
induction variable), which can be copied: that is what lets a strand split.

- A CTA starts as one strand of all its threads.
- An scf.if whose condition differs across the strand's threads, and whose regions hold an op
  that can block, *forks*: the threads of each branch become a strand that runs on alone (the
  producer warpgroup and the consumers of a warp-specialized kernel run at once). Each waits
  at the end of the if for the others of the fork to merge back into one strand; if nothing
  else can run, they go on alone (independent thread scheduling: a lane may wait inside a
  branch for lanes that are past it). A divergent if without blocking ops runs its branches
  one after the other, under a mask, as in lockstep. Loops whose bounds differ across
  threads do the same, per group of threads with the same bounds.
- A blocking op (an mbarrier wait, bar.sync, bar.red, the CTA barrier, cluster_sync) blocks the
  strand until its condition holds; threads whose condition holds first split off and go on.
- A primitive of warp, warpgroup or CTA scope waits for the strands holding the other threads
  of its scope to reach it, and runs once they are merged.
- When no strand can run, and none waits at the end of an if, the kernel is deadlocked: an
  InterpretError names, per group of threads, the Python line it waits at and what for.

Strands run one at a time, each until it blocks, in a fixed order, so a run is repeatable.
"""

from __future__ import annotations

import copy

import numpy as np
from mlir import ir

from tilemlir.ir.locations import python_line
from tilemlir.reference.memory import TMEM_COLUMNS, TMEM_LANES, InterpretError, Storage
from tilemlir.reference.sync import Collective, NamedBarrier, Wait
from tilemlir.target import registers_per_thread

_PRIMITIVES = frozenset({
    "tile.copy", "tile.copy_async", "tile.copy_async_multicast", "tile.gemm",
    "tile.gemm_async", "tile.cast", "tile.fill", "tile.iota", "tile.unary", "tile.binary",
    "tile.select", "tile.reduce"})
_BLOCKING = frozenset({"tile.mbarrier_wait", "tile.named_barrier", "tile.barrier_or",
                       "tile.cta_sync", "tile.cluster_sync", "tile.setmaxnreg"})
SCOPE_THREADS = {"thread": 1, "warp": 32, "warpgroup": 128}
_CONTROL = object()          # a handler changed the strand's stack itself


def located(err: InterpretError, op) -> InterpretError:
    """`err` with the op's Python line in front (once)."""
    if not getattr(err, "located", False):
        line = python_line(op)
        if line:
            err.args = (f"{line}: {err.args[0] if err.args else ''}",) + err.args[1:]
        err.located = True
    return err


def thread_ranges(mask: np.ndarray) -> str:
    """'threads 0-31, 64' (or 'thread 5') for the threads in `mask`."""
    threads = np.flatnonzero(mask).tolist()
    parts, start = [], None
    for i, t in enumerate(threads):
        if start is None:
            start = t
        if i + 1 == len(threads) or threads[i + 1] != t + 1:
            parts.append(f"{start}" if start == t else f"{start}-{t}")
            start = None
    return ("thread " if len(threads) == 1 else "threads ") + ", ".join(parts)


class Instr:
    """An op ready to run: its handler, and for a primitive its scope (threads per instance;
    0 for one thread)."""
    __slots__ = ("op", "handler", "end", "scope", "scope_name")

    def __init__(self, op, handler, end: bool, scope_name: str | None, threads: int):
        self.op, self.handler, self.end = op, handler, end
        self.scope_name = scope_name
        size = SCOPE_THREADS.get(scope_name, threads) if scope_name else 1
        self.scope = 0 if size == 1 else size


class Fork:
    """The threads that forked at an scf.if (or a loop) and merge back at its end."""
    __slots__ = ("mask", "parked", "dead")

    def __init__(self, mask: np.ndarray):
        self.mask, self.parked, self.dead = mask.copy(), [], False


class Frame:
    """A region being run: its ops and the next one, the threads running it, and for a loop
    the induction variable. `seq`: a divergent branch run under a narrower mask than the
    strand's (it holds no blocking op); `rest`: what runs after it under other masks (the else
    branch, a loop's other bounds); `fork`: the fork to merge at at its end."""
    __slots__ = ("ops", "pc", "owner", "mask", "full", "seq", "loop", "iv", "ub", "step",
                 "rest", "fork")

    def __init__(self, ops, owner, mask, seq=False, fork=None):
        self.ops, self.pc, self.owner = ops, 0, owner
        self.mask, self.full, self.seq = mask, bool(mask.all()), seq
        self.loop, self.iv, self.ub, self.step = False, 0, 0, 1
        self.rest, self.fork = [], fork


class Strand:
    """Threads of one CTA in lockstep, with their continuation."""
    __slots__ = ("cta", "stack", "wait", "parked", "done", "_covers")

    def __init__(self, cta, stack: list[Frame]):
        self.cta, self.stack = cta, stack
        self.wait: Wait | None = None
        self.parked: Fork | None = None
        self.done = False
        self._covers: dict[int, bool] = {}

    @property
    def mask(self) -> np.ndarray:
        return self.stack[0].mask

    def key(self) -> tuple:
        return tuple((id(f.ops), f.pc, f.iv) for f in self.stack)

    def covers(self, size: int) -> bool:
        """Whether the strand holds every thread of each group of `size` it has one of."""
        found = self._covers.get(size)
        if found is None:
            found = _covers(self.mask, size)
            self._covers[size] = found
        return found

    def restrict(self, part: np.ndarray) -> None:
        for frame in self.stack:
            frame.mask = frame.mask & part
            frame.full = False
        self._covers.clear()

    def widen(self, mask: np.ndarray) -> None:
        for frame in self.stack:
            frame.mask = mask.copy()
            frame.full = bool(mask.all())
        self._covers.clear()


def _covers(mask: np.ndarray, size: int) -> bool:
    for start in range(0, len(mask), size):
        chunk = mask[start:start + size]
        if chunk.any() and not chunk.all():
            return False
    return True


class CTA:
    """One CTA's state: its coordinates and rank in the cluster, every SSA value (per thread),
    its buffers, shared and tensor memory, named barriers and async groups."""

    def __init__(self, coords, rank: int, threads: int, shared_bytes: int):
        self.coords, self.rank = coords, rank
        self.env: dict = {}
        self.roots: dict = {}
        self.shared = Storage("shared", shared_bytes)
        self.tmem = Storage("tmem", TMEM_COLUMNS * 4, rows=TMEM_LANES)
        self.tmem_columns = 0
        self.named: dict[int, NamedBarrier] = {}
        self.exited = np.zeros(threads, bool)
        warpgroups = -(-threads // 128)
        self.wgmma_issued = [0] * warpgroups
        self.wgmma_pending: list[list] = [[] for _ in range(warpgroups)]
        self.wgmma_retired = np.zeros(-(-threads // 32), np.int64)
        self.wgmma_agents = [-1] * warpgroups
        self.groups: dict[tuple[str, int], list[int]] = {}   # (kind, thread) -> [committed, agent]
        # setmaxnreg: each warp's registers per thread, and what .dec gave back to the CTA
        self.launch_registers = registers_per_thread(threads)
        self.registers = np.full(-(-threads // 32), self.launch_registers, np.int64)
        self.register_pool = 0

    @property
    def name(self) -> str:
        return f"CTA {self.coords}"


class Scheduler:
    """Runs the strands of one cluster until every thread has returned; control flow, forks,
    merges and the deadlock report. The op handlers are Machine's."""

    def __init__(self, threads: int):
        self.threads = threads
        self.strands: list[Strand] = []
        self._instrs: dict = {}          # block -> its Instrs, for every cluster of the launch
        self._blocks: dict = {}          # op -> whether an op inside it can block

    # ------------------------------------------------------------------ ops
    def instrs(self, block) -> list[Instr]:
        found = self._instrs.get(block)
        if found is None:
            found = []
            for op in block.operations:
                op = op.operation
                name = op.name
                scope = ir.StringAttr(op.attributes["scope"]).value \
                    if name in _PRIMITIVES and "scope" in op.attributes else None
                handler = getattr(self, "_op_" + name.replace(".", "_"), None)
                found.append(Instr(op, handler, name in ("scf.yield", "gpu.return"), scope,
                                   self.threads))
            self._instrs[block] = found
        return found

    def may_block(self, op) -> bool:
        """Whether an op inside `op` (a loop or an if) can block its threads."""
        found = self._blocks.get(op)
        if found is None:
            found = False

            def visit(inner):
                nonlocal found
                if inner.name in _BLOCKING:
                    found = True
                    return ir.WalkResult.INTERRUPT
                return ir.WalkResult.ADVANCE
            op.walk(visit)
            self._blocks[op] = found
        return found

    # ------------------------------------------------------------------ values
    def set_value(self, value, result, mask: np.ndarray, full: bool = False) -> None:
        """`value` := `result` for the threads in `mask` (the others keep theirs)."""
        env = self.env
        if full:
            env[value] = result
            return
        old = env.get(value)
        if isinstance(result, np.ndarray) and isinstance(old, np.ndarray) \
                and old.shape == result.shape:
            env[value] = np.where(mask, result, old)
        elif hasattr(result, "byte_offset") and hasattr(old, "byte_offset") \
                and old.storage is result.storage:
            env[value] = type(result)(result.storage, np.where(mask, result.byte_offset,
                                                               old.byte_offset), result.limit)
        else:
            env[value] = result

    def _set_results(self, op, results, frame: Frame) -> None:
        if not isinstance(results, list):
            results = [results]
        for value, result in zip(op.results, results):
            self.set_value(value, result, frame.mask, frame.full)

    # ------------------------------------------------------------------ running a strand
    def enter(self, strand: Strand) -> None:
        self.strand = strand
        self.cta = cta = strand.cta
        self.env, self.roots = cta.env, cta.roots

    def _advance(self, strand: Strand) -> None:
        """Runs `strand` until it blocks, waits to merge, or returns."""
        self.enter(strand)
        stack = strand.stack
        while True:
            frame = stack[-1]
            instr = frame.ops[frame.pc]
            if instr.end:
                if self._end_region(strand, frame, instr):
                    return
                continue
            if instr.scope and not frame.seq and not strand.covers(instr.scope):
                strand.wait = Collective(instr.op, instr.scope_name, instr.scope)
                return
            frame.pc += 1
            op = instr.op
            try:
                if instr.handler is None:
                    raise InterpretError(f"the interpreter does not model '{op.name}'")
                result = instr.handler(op, frame.mask)
            except InterpretError as err:
                raise located(err, op) from None
            if result is None:
                continue
            if result is _CONTROL:
                if strand.parked is not None or strand.done:
                    return
                continue
            if isinstance(result, Wait):
                strand.wait = result
                return
            self._set_results(op, result, frame)

    def _end_region(self, strand: Strand, frame: Frame, instr: Instr) -> bool:
        """At the region's terminator: the next iteration, the next part, or out of the
        region. True when the strand stops (returned, or waits to merge)."""
        op = instr.op
        if op.name == "gpu.return":
            strand.cta.exited |= frame.mask
            strand.done = True
            return True
        values = [self.env[v] for v in op.operands]
        owner = frame.owner
        if frame.loop:
            frame.iv += frame.step
            if frame.iv < frame.ub:
                self._loop_arguments(frame, values)
                frame.pc = 0
                return False
            self._results(owner, values, frame)
            if self._next_loop_part(frame):
                return False
        else:
            self._results(owner, values, frame)
            if frame.rest:
                ops, mask = frame.rest.pop()
                strand.stack[-1] = Frame(ops, owner, mask, seq=True)
                return False
        strand.stack.pop()
        if frame.fork is not None:
            return self._park(strand, frame.fork)
        return False

    def _results(self, owner, values, frame: Frame) -> None:
        for value, result in zip(owner.results, values):
            self.set_value(value, result, frame.mask, frame.full)

    # ------------------------------------------------------------------ scf
    def _op_scf_if(self, op, mask):
        strand = self.strand
        frame = strand.stack[-1]
        cond = self.env[op.operands[0]].astype(bool)
        then_mask, else_mask = mask & cond, mask & ~cond
        has_then, has_else = bool(then_mask.any()), bool(else_mask.any())
        then_ops = self.instrs(op.regions[0].blocks[0])
        else_ops = self.instrs(op.regions[1].blocks[0]) \
            if len(op.regions) > 1 and len(op.regions[1].blocks) else None
        if not has_else:
            strand.stack.append(Frame(then_ops, op, mask, seq=frame.seq))
        elif not has_then:
            if else_ops is not None:
                strand.stack.append(Frame(else_ops, op, mask, seq=frame.seq))
        elif not frame.seq and self.may_block(op):
            fork = Fork(mask)
            other = self.split(strand, else_mask)
            strand.restrict(then_mask)
            strand.stack.append(Frame(then_ops, op, strand.mask, fork=fork))
            if else_ops is not None:
                other.stack.append(Frame(else_ops, op, other.mask, fork=fork))
            else:
                self._park(other, fork)
        else:
            then = Frame(then_ops, op, then_mask, seq=True)
            if else_ops is not None:
                then.rest.append((else_ops, else_mask))
            strand.stack.append(then)
        return _CONTROL

    def _op_scf_for(self, op, mask):
        strand = self.strand
        frame = strand.stack[-1]
        threads = np.flatnonzero(mask)
        bounds = np.stack([np.asarray(self.env[op.operands[i]])[threads] for i in range(3)],
                          axis=1).astype(np.int64)
        parts = []
        for lb, ub, step in np.unique(bounds, axis=0).tolist():
            same = np.zeros_like(mask)
            same[threads[(bounds == (lb, ub, step)).all(axis=1)]] = True
            parts.append((same, lb, ub, step))
        body = op.regions[0].blocks[0]
        if len(parts) == 1:
            self._start_loop(strand, op, body, mask, parts[0][1:], seq=frame.seq)
        elif not frame.seq and self.may_block(op):
            fork = Fork(mask)
            others = [(self.split(strand, part[0]), part) for part in parts[1:]]
            strand.restrict(parts[0][0])
            for s, part in [(strand, parts[0])] + others:
                self._start_loop(s, op, body, s.mask, part[1:], fork=fork)
        else:
            left = list(parts)
            while left:                          # the first part with an iteration runs first
                part = left.pop(0)
                if self._start_loop(strand, op, body, part[0], part[1:], seq=True,
                                    rest=left) is not None:
                    break
        return _CONTROL

    def _start_loop(self, strand, op, body, mask, bounds, seq=False, fork=None, rest=()):
        """Pushes the loop's frame for the threads `mask`; without an iteration, sets its
        results (and merges at `fork`) instead. The frame, or None."""
        lb, ub, step = bounds
        if step <= 0:
            raise InterpretError(f"a loop step of {step}")
        inits = [self.env[v] for v in list(op.operands)[3:]]
        if lb >= ub:
            for value, init in zip(op.results, inits):
                self.set_value(value, init, mask)
            if fork is not None:
                self._park(strand, fork)
            return None
        frame = Frame(self.instrs(body), op, mask, seq=seq, fork=fork)
        frame.loop, frame.iv, frame.ub, frame.step = True, lb, ub, step
        frame.rest = [(p[0], p[1], p[2], p[3]) for p in rest]
        strand.stack.append(frame)
        self._loop_arguments(frame, inits)
        return frame

    def _set_inits(self, op, mask) -> None:
        for value, init in zip(op.results, [self.env[v] for v in list(op.operands)[3:]]):
            self.set_value(value, init, mask)

    def _loop_arguments(self, frame: Frame, carried) -> None:
        args = list(frame.owner.regions[0].blocks[0].arguments)
        self.set_value(args[0], np.full(self.threads, frame.iv, np.int64), frame.mask,
                       frame.full)
        for arg, value in zip(args[1:], carried):
            self.set_value(arg, value, frame.mask, frame.full)

    def _next_loop_part(self, frame: Frame) -> bool:
        """The loop's threads with other bounds run it next (a divergent loop, in sequence);
        those without an iteration get the initial values. False when none is left."""
        while frame.rest:
            mask, lb, ub, step = frame.rest.pop(0)
            frame.mask, frame.full = mask, False
            if lb < ub:
                frame.iv, frame.ub, frame.step, frame.pc = lb, ub, step, 0
                self._loop_arguments(frame, [self.env[v] for v in
                                             list(frame.owner.operands)[3:]])
                return True
            self._set_inits(frame.owner, mask)
        return False

    # ------------------------------------------------------------------ forks and merges
    def split(self, strand: Strand, part: np.ndarray) -> Strand:
        """A new strand of the threads `part` of `strand`, at the same point."""
        other = Strand(strand.cta, [copy.copy(f) for f in strand.stack])
        for frame in other.stack:
            frame.rest = list(frame.rest)
        other.restrict(part)
        other.wait = strand.wait
        self.strands.append(other)
        return other

    def _park(self, strand: Strand, fork: Fork) -> bool:
        """`strand` reached the end of `fork`'s region: merges with the fork's other threads
        once all are there. True when the strand stops (it waits for them)."""
        if fork.dead:
            return False
        fork.parked.append(strand)
        union = np.zeros_like(fork.mask)
        for s in fork.parked:
            union |= s.mask
        if not np.array_equal(union, fork.mask):
            strand.parked = fork
            return True
        for s in fork.parked:
            if s is not strand:
                s.done = True
        fork.parked.clear()
        strand.parked = None
        strand.widen(fork.mask)
        return False

    def _rendezvous(self) -> bool:
        """Merges the strands that wait at one collective primitive once every thread of its
        scope is there."""
        waiting: dict = {}
        for s in self.strands:
            if isinstance(s.wait, Collective) and not s.done:
                waiting.setdefault((id(s.cta), s.stack[-1].ops[s.stack[-1].pc].op, s.key()),
                                   []).append(s)
        merged = False
        for group in waiting.values():
            union = np.zeros_like(group[0].mask)
            for s in group:
                union |= s.mask
            if not _covers(union, group[0].wait.size):
                continue
            keep = group[0]
            for s in group[1:]:
                s.done = True
            keep.widen(union)
            keep.wait = None
            merged = True
        return merged

    # ------------------------------------------------------------------ the loop
    def schedule(self) -> None:
        """Runs the strands until every one has returned."""
        while True:
            progressed = False
            for strand in list(self.strands):
                if strand.done:
                    continue
                if strand.wait is None and strand.parked is None:
                    self._advance(strand)
                    progressed = True
                elif strand.wait is not None and not isinstance(strand.wait, Collective):
                    progressed |= self._poll(strand)
            progressed |= self._rendezvous()
            self.strands = [s for s in self.strands if not s.done]
            if not self.strands:
                return
            if not progressed:
                parked = [s for s in self.strands if s.parked is not None]
                if not parked:
                    raise self._deadlock()
                for s in parked:              # nothing else can run: they go on alone
                    s.parked.dead = True
                    s.parked.parked.clear()
                    s.parked = None

    def _poll(self, strand: Strand) -> bool:
        self.enter(strand)
        wait = strand.wait
        try:
            ready = wait.ready(self) & strand.mask
            if not ready.any():
                return False
            if np.array_equal(ready, strand.mask):
                strand.wait = None
                wait.finish(self, ready)
                return True
            other = self.split(strand, ready)
            other.wait = None
            strand.restrict(~ready)
            self.enter(other)
            wait.finish(self, ready)
        except InterpretError as err:
            raise located(err, wait.op) from None
        return True

    def _deadlock(self) -> InterpretError:
        lines, first = [], None
        for s in self.strands:
            self.enter(s)
            op = s.wait.op
            line = python_line(op)
            first = first or line
            lines.append(f"  {s.cta.name}, {thread_ranges(s.mask)}: at {line or op.name}: "
                         f"{s.wait.describe(self, s.mask)}")
        for cta in self.cluster:
            if cta.exited.any():
                lines.append(f"  {cta.name}, {thread_ranges(cta.exited)}: returned")
        err = InterpretError(f"{first + ': ' if first else ''}deadlock: no thread can go on "
                             f"(on the GPU the kernel would hang)\n" + "\n".join(lines))
        err.located = True
        return err

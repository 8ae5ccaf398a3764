"""tilemlir-opt: run pass pipelines that mix tilemlir's passes with upstream MLIR ones.

    tilemlir-opt kernel.mlir --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80})'
    tilemlir-opt kernel.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx

Errors are printed as `file:line:col: error: message` and exit with status 1; the process never
shows a Python traceback for bad input (TILEMLIR_DEBUG=1 shows one for internal errors).

Nothing is lost: `-o PATH` is written only when the whole run succeeded, so a failing run (any
chunk of --split-input-file included) leaves an existing file as it was (mlir-opt truncates it
first and deletes it when the run fails). Otherwise -o behaves as mlir-opt's: devices, FIFOs,
/dev/stdout and links are written through, never replaced; a regular file is replaced by a
complete temporary file renamed over it, keeping its mode; a read-only file is an error
(`write_output`).

The process never dies on input: the command (`main`) is a thin launcher that runs the work in a
child process (this module run with -m). MLIR and LLVM abort the process on some inputs instead of
raising (assertions in the parser, the NVPTX backend's "Cannot select"); a child killed that way
is reported as an internal error with exit status 1, and since only a child that succeeded
writes -o, nothing is lost either. The launcher does not load MLIR (a few ms).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tilemlir.tools import diagnostics

if TYPE_CHECKING:
    from mlir import ir

SPLIT_MARKER = re.compile(r"^//\s*-----\s*$", re.M)


def _help_epilog() -> str:
    from tilemlir.tools.pass_pipeline import TILE_PASSES
    lines = ["tilemlir passes (use them by name inside --pass-pipeline):"]
    for info in TILE_PASSES.values():
        lines.append(f"  {info.name:18s} {info.summary}")
        for opt, text in info.options.items():
            lines.append(f"  {'':18s}   {opt}=...  {text}")
    lines.append("Any upstream MLIR pass or pipeline (canonicalize, cse, "
                 "gpu-lower-to-nvvm-pipeline{...}, ...) can be mixed in.")
    return "\n".join(lines)


class _PrintVersion(argparse.Action):
    """--version; the package versions are looked up only when it is given."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print tilemlir's version and its MLIR/LLVM packages', then exit")

    def __call__(self, parser, namespace, values, option_string=None):
        from tilemlir.version import version_text
        print(version_text())
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tilemlir-opt", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Runs MLIR pass pipelines over tile-dialect IR.", epilog=_help_epilog())
    p.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' for stdin)")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    p.add_argument("--pass-pipeline", default="", help="e.g. 'builtin.module(tile-dispatch)'")
    p.add_argument("--split-input-file", action="store_true",
                   help="process each chunk separated by '// -----' on its own")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check diagnostics against expected-error/warning/note/remark comments")
    printing = p.add_argument_group(
        "IR printing and timing (as mlir-opt's; dumps go to stderr and show the whole module)")
    printing.add_argument("--mlir-print-ir-before", metavar="PASS[,PASS...]", action="append",
                          default=[], help="print the IR before each run of these passes "
                          "(tilemlir or upstream pass names, e.g. tile-dispatch,cse)")
    printing.add_argument("--mlir-print-ir-after", metavar="PASS[,PASS...]", action="append",
                          default=[], help="print the IR after each run of these passes")
    printing.add_argument("--mlir-print-ir-before-all", action="store_true",
                          help="print the IR before every pass")
    printing.add_argument("--mlir-print-ir-after-all", action="store_true",
                          help="print the IR after every pass")
    printing.add_argument("--mlir-print-ir-after-change", action="store_true",
                          help="print the IR after a pass only when the pass changed it (alone: "
                               "after every pass that changed it)")
    printing.add_argument("--mlir-print-ir-after-failure", action="store_true",
                          help="print the IR after a pass that failed")
    printing.add_argument("--mlir-print-debuginfo", action="store_true",
                          help="print locations (loc(...)) in the output and in IR dumps")
    printing.add_argument("--mlir-timing", action="store_true",
                          help="print the time each pass took, after each input (chunk)")
    p.add_argument("--emit", choices=("mlir", "ptx"), default="mlir",
                   help="print the resulting IR (default) or the PTX of its gpu.binary ops")
    p.add_argument("--list-variants", action="store_true",
                   help="list every tile primitive's registered variants, in dispatch order")
    p.add_argument("--explain-dispatch", action="store_true",
                   help="print, for each tile op tile-dispatch lowers, the variant chosen, the "
                        "variants that lost and why, the ops it emits and the bytes it moves "
                        "(to stderr)")
    p.add_argument("--version", action=_PrintVersion)
    return p


def list_variants() -> str:
    """The registry, primitive by primitive: name, priority, predicates, what each does."""
    from tilemlir.dispatch.context import OPERANDS
    from tilemlir.dispatch.registry import variants_for
    from tilemlir.lowering.cuda import load_variants
    load_variants()
    lines = []
    for primitive in OPERANDS:
        lines.append(f"tile.{primitive}")
        for v in variants_for(primitive):
            checks = ", ".join(p.name for p in v.predicates) or "-"
            lines.append(f"  {v.name:16s} priority {v.priority:3d}  [{checks}]")
            if v.doc:
                lines.append(f"  {'':16s} {v.doc.splitlines()[0]}")
    return "\n".join(lines)


def _chunks(text: str, split: bool) -> list[tuple[str, int]]:
    """(chunk text, first line number) pairs."""
    if not split:
        return [(text, 1)]
    chunks, start, line = [], 0, 1
    for m in SPLIT_MARKER.finditer(text):
        chunks.append((text[start:m.start()], line))
        line += text[start:m.end()].count("\n")
        start = m.end()
    chunks.append((text[start:], line))
    return chunks


class UsageError(Exception):
    """A mistake on the command line or in the input: one line, exit status 1."""


def _render_output(module: ir.Module, emit: str, debug_info: bool) -> str:
    if emit == "ptx":
        from tilemlir.target.ptx import extract_ptx
        ptx = extract_ptx(module)
        if not ptx:
            raise UsageError("--emit=ptx: the result has no gpu.binary with PTX; run a pipeline "
                             "that compiles to PTX, e.g. --pass-pipeline='builtin.module("
                             "tile-to-ptx{chip=sm_90a})'")
        return "\n".join(ptx.values())
    return module.operation.get_asm(enable_debug_info=debug_info)


_DUMP_HEADER = re.compile(r"^// -----// IR Dump (Before|After) (.*?)( Failed)? \(([^()]*)\)"
                          r"(?: \('[^']*' operation[^)]*\))? //----- //$", re.M)


@dataclass
class IRPrinting:
    """The --mlir-print-ir-* options. MLIR's PassManager prints before or after every pass
    (and only after a change, or a failure); dumps of named passes are cut out of its output
    (`select`), by the pass argument in each dump's header, so tilemlir's Python passes and
    upstream passes are named alike."""
    before: set[str] = field(default_factory=set)
    after: set[str] = field(default_factory=set)
    before_all: bool = False
    after_all: bool = False
    after_change: bool = False
    after_failure: bool = False
    debug_info: bool = False

    @staticmethod
    def of(args, ctx) -> "IRPrinting":
        from tilemlir.tools.pass_pipeline import check_pass_name

        def names(option: str, values: list[str]) -> set[str]:
            found = {n.strip() for v in values for n in v.split(",") if n.strip()}
            if values and not found:
                raise UsageError(f"{option} needs pass names, e.g. {option}=tile-dispatch,cse")
            for name in sorted(found):
                try:
                    check_pass_name(name, ctx)
                except ValueError as err:
                    raise UsageError(f"{option}: {err}") from None
            return found

        return IRPrinting(names("--mlir-print-ir-before", args.mlir_print_ir_before),
                          names("--mlir-print-ir-after", args.mlir_print_ir_after),
                          args.mlir_print_ir_before_all, args.mlir_print_ir_after_all,
                          args.mlir_print_ir_after_change, args.mlir_print_ir_after_failure,
                          args.mlir_print_debuginfo)

    @property
    def _after_some(self) -> bool:
        """Dumps after passes other than failed ones are asked for."""
        return self.after_all or bool(self.after) or self.after_change

    @property
    def filtered(self) -> bool:
        """MLIR prints more than asked for: its output must be cut (`select`). It prints
        before and after every pass or none, and "after failure" means after failures only."""
        return (bool(self.before) and not self.before_all) or \
            (bool(self.after) and not self.after_all) or (self.after_failure and self._after_some)

    def mlir_options(self) -> dict | None:
        """PassManager.enable_ir_printing's arguments, or None to print nothing."""
        before = self.before_all or bool(self.before)
        after = self._after_some or self.after_failure
        if not before and not after:
            return None
        return dict(print_before_all=before, print_after_all=after,
                    print_after_change=self.after_change,
                    print_after_failure=self.after_failure and not self._after_some,
                    enable_debug_info=self.debug_info)

    def select(self, printed: str) -> str:
        """The dumps of `printed` (MLIR's output) that were asked for, and any other text."""
        out, keep, last = [], True, 0
        for m in _DUMP_HEADER.finditer(printed):
            if keep:
                out.append(printed[last:m.start()])
            when, failed, argument = m.group(1), bool(m.group(3)), m.group(4)
            if when == "Before":
                keep = self.before_all or argument in self.before
            else:
                keep = (failed and self.after_failure) or self.after_all or \
                    argument in self.after or (self.after_change and not self.after)
            last = m.start()
        if keep:
            out.append(printed[last:])
        return "".join(out)


def _read_input(path: str) -> tuple[str, str]:
    """(display name, text) of the input, checked before MLIR parses it."""
    from tilemlir.ir.source import decode
    name = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None
    return name, decode(data, name)


# Paths that name one of this process's file descriptors: written there, never reopened (so a
# `>>` log stays appended to and a pipe is not reopened by name).
_FD_PATH = re.compile(r"/dev/(?:(?P<std>stdout|stderr)|fd/(?P<fd>\d+))|/proc/self/fd/(?P<proc>\d+)")


def _write_fd(fd: int, text: str) -> None:
    data = text.encode()
    while data:
        data = data[os.write(fd, data):]


def write_output(path: str, text: str) -> None:
    """-o PATH, as mlir-opt opens and writes it, except that what can be replaced safely is.

    - /dev/stdout, /dev/stderr, /dev/fd/N: written to that file descriptor.
    - A device, FIFO or socket (after following links): opened and written, never replaced.
    - A regular file (or a new one): the text goes to a temporary file in the same directory,
      renamed over the file when complete, keeping its mode: a reader (or a crash) never sees
      a partial file. A link is followed, not replaced. Where a rename would change what the
      file is (another owner, hard links) or the directory is not writable, the file is
      truncated and written in place, as mlir-opt does.
    - A file the user may not write, or one with no write permission at all (even for root),
      is an error naming it, and stays as it was.
    """
    m = _FD_PATH.fullmatch(path)
    try:
        if m:
            fd = {"stdout": 1, "stderr": 2}[m["std"]] if m["std"] else int(m["fd"] or m["proc"])
            _write_fd(fd, text)
            return
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise UsageError(f"cannot write {path}: it is a directory")
        if st is not None and not stat.S_ISREG(st.st_mode):
            fd = os.open(path, os.O_WRONLY | os.O_NOCTTY)
            try:
                _write_fd(fd, text)
            finally:
                os.close(fd)
            return
        _write_regular(path, st, text)
    except OSError as err:
        raise UsageError(f"cannot write {path}: {err.strerror or err}") from None


def _write_regular(path: str, st: os.stat_result | None, text: str) -> None:
    target = os.path.realpath(path)          # a link is written through, not replaced
    directory = os.path.dirname(target) or "."
    if st is not None:
        if not st.st_mode & 0o222:
            raise UsageError(f"cannot write {path}: the file is read-only; it was left as it was")
        if not os.access(target, os.W_OK):
            raise UsageError(f"cannot write {path}: permission denied; it was left as it was")
        mode = stat.S_IMODE(st.st_mode)
        if st.st_nlink > 1 or st.st_uid != os.geteuid() or not os.access(directory, os.W_OK):
            with open(target, "w") as f:     # in place: the same file, links and owner
                f.write(text)
            return
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{os.path.basename(target)}.",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def _name_source(module, filename: str) -> None:
    """Ops and block arguments parsed from a string are located in file "-": name the input
    file instead, as mlir-opt does, so that line info (tile-to-ptx{line-info=true}: `.file`)
    and --mlir-print-debuginfo point at it."""
    from mlir import ir

    def renamed(loc):
        if loc.is_a_file() and loc.filename == "-":
            return ir.Location.file(filename, loc.start_line, loc.start_col)
        return None

    def visit(op):
        loc = renamed(op.location)
        if loc is not None:
            op.location = loc
        for region in op.regions:
            for block in region.blocks:
                for arg in block.arguments:
                    loc = renamed(arg.location)
                    if loc is not None:
                        arg.set_location(loc)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)


def _process(chunk: str, first_line: int, args, ctx) -> tuple[str | None, list]:
    """(printed output or None, diagnostics) for one chunk."""
    from mlir import ir

    from tilemlir.dispatch import explain
    from tilemlir.ir.source import parse_source
    from tilemlir.pipeline import captured_stderr
    from tilemlir.tools.pass_pipeline import pass_manager
    produced: list[diagnostics.Diagnostic] = []

    def on_diagnostic(d):
        produced.extend(diagnostics.from_mlir(d))
        return True

    handler = ctx.attach_diagnostic_handler(on_diagnostic)
    try:
        with ctx:
            try:
                module = parse_source(chunk, args.filename, first_line)
            except ir.MLIRError as err:
                for d in err.error_diagnostics:
                    produced.extend(diagnostics.from_mlir(d))
                return None, produced
            if args.filename != "<stdin>":
                _name_source(module, os.path.abspath(args.filename))
            if args.pass_pipeline:
                printing = args.printing
                pm = pass_manager(args.pass_pipeline, ctx, printing.mlir_options(),
                                  args.mlir_timing)
                recorder = explain.recording() if args.explain_dispatch \
                    else contextlib.nullcontext()
                capture = captured_stderr() if printing.filtered else contextlib.nullcontext()
                try:
                    with recorder as decisions, capture as printed:
                        pm.run(module.operation)
                except ir.MLIRError as err:
                    for d in err.error_diagnostics:
                        produced.extend(diagnostics.from_mlir(d))
                    return None, produced
                finally:
                    if printing.filtered:
                        sys.stderr.write(printing.select(printed[0]))
                    if args.explain_dispatch:
                        print(explain.render(decisions), file=sys.stderr)
                    sys.stderr.flush()
                    del pm           # --mlir-timing: the report is printed now
            elif args.explain_dispatch:
                raise UsageError("--explain-dispatch explains the tile-dispatch passes of "
                                 "--pass-pipeline, and none was given")
            return _render_output(module, args.emit, args.mlir_print_debuginfo), produced
    finally:
        handler.detach()


def run(argv: list[str]) -> int:
    """tilemlir-opt `argv` in this process; returns the exit status."""
    from tilemlir.env import SettingError
    from tilemlir.ir.source import SourceError
    from tilemlir.pipeline import PipelineError
    args = _parser().parse_args(argv)
    try:
        diagnostics.debug_enabled()           # a bad TILEMLIR_DEBUG is an error at once
        if args.list_variants:
            print(list_variants())
            return 0
        return _run(args)
    except (UsageError, SourceError, PipelineError, SettingError) as err:
        print(f"tilemlir-opt: {err}", file=sys.stderr)
        return 1


def _run(args) -> int:
    from tilemlir.ir.context import make_context
    args.filename, text = _read_input(args.input)
    ctx = make_context()
    args.printing = IRPrinting.of(args, ctx)
    # MLIR's worker threads (parallel verification and nested pass pipelines) would call the
    # Python diagnostic handler without holding the GIL, which kills the process.
    ctx.enable_multithreading(False)
    outputs, failed, problems = [], False, []
    for chunk, first_line in _chunks(text, args.split_input_file):
        out, produced = _process(chunk, first_line, args, ctx)
        if args.verify_diagnostics:
            problems += diagnostics.verify(diagnostics.expectations(chunk, first_line), produced,
                                           args.filename)
        else:
            for d in produced:
                print(d.render(args.filename), file=sys.stderr)
            failed |= any(d.severity == "error" for d in produced)
        if out is not None:
            outputs.append(out)
    for p in problems:
        print(p, file=sys.stderr)
    failed = failed or bool(problems)
    result = "\n// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result + ("\n" if result and not result.endswith("\n") else ""))
    elif failed:
        print(f"tilemlir-opt: {args.output} not written (the run failed)", file=sys.stderr)
    else:
        write_output(args.output, result)
    return 1 if failed else 0


def main() -> None:
    """The tilemlir-opt command: runs `run_in_process` in a child process (see the module
    docstring) and turns the child's death by a signal into an internal error, exit status 1."""
    try:
        # close_fds=False: the user's inheritable descriptors reach the child, so that
        # `-o /dev/fd/3 3>file` works as in one process.
        child = subprocess.run([sys.executable, "-m", "tilemlir.tools.opt", *sys.argv[1:]],
                               close_fds=False)
    except KeyboardInterrupt:
        sys.exit(130)
    except OSError as err:
        print(f"tilemlir-opt: cannot start the compiler process ({sys.executable}): "
              f"{err.strerror or err}", file=sys.stderr)
        sys.exit(1)
    code = child.returncode
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        print(f"tilemlir-opt: internal error: MLIR/LLVM killed the compiler process ({name}; "
              f"its own message, if any, is above) ({diagnostics.REPORT_HINT})", file=sys.stderr)
        code = 1
    sys.exit(code)


def run_in_process() -> None:
    """tilemlir-opt with sys.argv, in this process: exits with its status, and never shows a
    traceback (TILEMLIR_DEBUG=1 does)."""
    try:
        code = run(sys.argv[1:])
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # the reader (head, less) went away
        sys.stderr.close()
        code = 0
    except Exception as err:  # never a traceback for the user; TILEMLIR_DEBUG=1 shows it
        if diagnostics.debug_enabled():
            raise
        print(diagnostics.internal_error("tilemlir-opt", err), file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.exit(code)


if __name__ == "__main__":
    run_in_process()

"""tilemlir-opt: run pass pipelines that mix tilemlir's passes with upstream MLIR ones.

    tilemlir-opt kernel.mlir --pass-pipeline='builtin.module(tile-dispatch{chip=sm_80})'
    tilemlir-opt kernel.mlir --pass-pipeline='builtin.module(tile-to-ptx{chip=sm_90a})' --emit=ptx

Errors are printed as `file:line:col: error: message` and exit with status 1; the process never
shows a Python traceback for bad input.
"""

from __future__ import annotations

import argparse
import os
import re
import sys

from mlir import ir

from tilemlir.ir.context import make_context
from tilemlir.pipeline import TILE_PASSES, PipelineError, build_pass_manager
from tilemlir.target.ptx import extract_ptx
from tilemlir.tools import diagnostics

SPLIT_MARKER = re.compile(r"^//\s*-----\s*$", re.M)


def _help_epilog() -> str:
    lines = ["tilemlir passes (use them by name inside --pass-pipeline):"]
    for info in TILE_PASSES.values():
        lines.append(f"  {info.name:18s} {info.summary}")
        for opt, text in info.options.items():
            lines.append(f"  {'':18s}   {opt}=...  {text}")
    lines.append("Any upstream MLIR pass or pipeline (canonicalize, cse, "
                 "gpu-lower-to-nvvm-pipeline{...}, ...) can be mixed in.")
    return "\n".join(lines)


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
    p.add_argument("--mlir-print-ir-after-all", action="store_true",
                   help="print the IR after every pass (to stderr)")
    p.add_argument("--emit", choices=("mlir", "ptx"), default="mlir",
                   help="print the resulting IR (default) or the PTX of its gpu.binary ops")
    p.add_argument("--list-variants", action="store_true",
                   help="list every tile primitive's registered variants, in dispatch order")
    return p


def list_variants() -> str:
    """The registry, primitive by primitive: name, priority, predicates, what each does."""
    from tilemlir.dispatch.context import OPERANDS
    from tilemlir.dispatch.registry import variants_for
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


def _render_output(module: ir.Module, emit: str) -> str:
    if emit == "ptx":
        return "\n".join(extract_ptx(module).values())
    return str(module)


def _process(chunk: str, first_line: int, args, ctx) -> tuple[str | None, list]:
    """(printed output or None, diagnostics) for one chunk."""
    produced: list[diagnostics.Diagnostic] = []

    def on_diagnostic(d):
        produced.extend(diagnostics.from_mlir(d))
        return True

    handler = ctx.attach_diagnostic_handler(on_diagnostic)
    try:
        with ctx:
            try:
                module = ir.Module.parse("\n" * (first_line - 1) + chunk)
            except ir.MLIRError as err:
                for d in err.error_diagnostics:
                    produced.extend(diagnostics.from_mlir(d))
                return None, produced
            if args.pass_pipeline:
                pm = build_pass_manager(args.pass_pipeline, ctx, args.mlir_print_ir_after_all)
                try:
                    pm.run(module.operation)
                except ir.MLIRError as err:
                    for d in err.error_diagnostics:
                        produced.extend(diagnostics.from_mlir(d))
                    return None, produced
            return _render_output(module, args.emit), produced
    finally:
        handler.detach()


def run(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.list_variants:
        print(list_variants())
        return 0
    filename = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    except OSError as err:
        print(f"tilemlir-opt: cannot read {args.input}: {err.strerror}", file=sys.stderr)
        return 1
    ctx = make_context()
    outputs, failed, problems = [], False, []
    for chunk, first_line in _chunks(text, args.split_input_file):
        try:
            out, produced = _process(chunk, first_line, args, ctx)
        except PipelineError as err:
            print(f"tilemlir-opt: {err}", file=sys.stderr)
            return 1
        if args.verify_diagnostics:
            problems += diagnostics.verify(diagnostics.expectations(chunk, first_line), produced,
                                           filename)
        else:
            for d in produced:
                print(d.render(filename), file=sys.stderr)
            failed |= any(d.severity == "error" for d in produced)
        if out is not None:
            outputs.append(out)
    for p in problems:
        print(p, file=sys.stderr)
    result = "\n// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result + ("\n" if result and not result.endswith("\n") else ""))
    else:
        with open(args.output, "w") as f:
            f.write(result)
    return 1 if (failed or problems) else 0


def main() -> None:
    try:
        code = run(sys.argv[1:])
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:  # the reader (head, less) went away
        sys.stderr.close()
        code = 0
    except Exception as err:  # never a traceback for the user; TILEMLIR_DEBUG=1 shows it
        if os.environ.get("TILEMLIR_DEBUG"):
            raise
        print(f"tilemlir-opt: internal error: {type(err).__name__}: {err}", file=sys.stderr)
        code = 1
    sys.stdout.flush()
    sys.exit(code)


if __name__ == "__main__":
    main()

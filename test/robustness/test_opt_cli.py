"""tilemlir-opt's command line: nothing written or lost on failure, unreadable input, bad
options. Every case runs in a child process (an abort fails the case, not the suite)."""

import os
import signal
import subprocess
import sys
import time

import pytest

from harness import OptCase, nested

GOOD = "func.func @f() {\n  return\n}\n"
GOOD_OUT = "module {\n  func.func @f() {\n    return\n  }\n}\n"
SYNTAX = "func.func @f() { %x = arith.addi %y, %y : i32 }\n"
OLD = b"previous contents\n"
TILE_DISPATCH = "--pass-pipeline=builtin.module(tile-dispatch{chip=sm_80})"
# A kernel whose tile.gemm has no variant on sm_75: dispatch fails with a located diagnostic.
FAILING_DISPATCH = """
!F = !tile.buf<array<i64: 16, 8>, f32, "local", #tile.layout<"S[(2, 8, 4, 2):(2, 4@laneid, 1@laneid, 1)]">>
gpu.module @m {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
    %a = "tile.alloc_local"() : () -> !F
    %b = "tile.alloc_local"() : () -> !F
    "tile.fill"(%a) {scope = "warp", value = 1.0 : f32} : (!F) -> ()
    "tile.cast"(%b, %a) {scope = "bogus"} : (!F, !F) -> ()
    gpu.return
  }
}
"""


CASES = [
    # ---- nothing lost: -o is replaced only by a successful run
    OptCase("syntax-error-keeps-output", ["in.mlir", "-o", "out.mlir"],
            {"in.mlir": SYNTAX, "out.mlir": OLD},
            errors=("in.mlir:1:", "use of undeclared SSA value", "out.mlir not written")),
    OptCase("unknown-pass-keeps-output", ["in.mlir", "-o", "out.mlir",
                                          "--pass-pipeline=builtin.module(no-such-pass)"],
            {"in.mlir": GOOD, "out.mlir": OLD}, errors=("'no-such-pass' is neither",)),
    OptCase("failing-pass-keeps-output", ["in.mlir", "-o", "out.mlir", TILE_DISPATCH],
            {"in.mlir": FAILING_DISPATCH, "out.mlir": OLD}, errors=("out.mlir not written",)),
    OptCase("output-equal-to-input-failing", ["in.mlir", "-o", "in.mlir",
                                              "--pass-pipeline=builtin.module(bogus)"],
            {"in.mlir": GOOD}, errors=("'bogus' is neither",)),
    OptCase("output-equal-to-input-syntax", ["in.mlir", "-o", "in.mlir"], {"in.mlir": SYNTAX},
            errors=("in.mlir not written",)),
    OptCase("output-equal-to-input-succeeds", ["in.mlir", "-o", "in.mlir"], {"in.mlir": GOOD},
            rc=0, after={"in.mlir": GOOD_OUT}),
    OptCase("split-failing-chunk-keeps-output",
            ["in.mlir", "--split-input-file", "-o", "out.mlir"],
            {"in.mlir": GOOD + "// -----\n" + SYNTAX + "// -----\n" + GOOD, "out.mlir": OLD},
            errors=("in.mlir:5:", "out.mlir not written")),
    OptCase("split-all-good-writes", ["in.mlir", "--split-input-file", "-o", "out.mlir"],
            {"in.mlir": GOOD + "// -----\n" + GOOD, "out.mlir": OLD}, rc=0,
            after={"in.mlir": GOOD + "// -----\n" + GOOD,
                   "out.mlir": GOOD_OUT + "\n// -----\n" + GOOD_OUT}),
    OptCase("success-writes-new-output", ["in.mlir", "-o", "new.mlir"], {"in.mlir": GOOD}, rc=0,
            after={"in.mlir": GOOD, "new.mlir": GOOD_OUT}),
    OptCase("verify-diagnostics-mismatch-keeps-output",
            ["in.mlir", "--verify-diagnostics", "-o", "out.mlir"],
            {"in.mlir": "// expected-error@+1 {{never produced}}\n" + GOOD, "out.mlir": OLD},
            errors=("was not produced",)),
    OptCase("emit-ptx-without-binary", ["in.mlir", "--emit=ptx", "-o", "out.mlir"],
            {"in.mlir": GOOD, "out.mlir": OLD}, errors=("--emit=ptx", "no gpu.binary")),
    OptCase("emit-ptx-without-binary-stdout", ["in.mlir", "--emit=ptx"], {"in.mlir": GOOD},
            errors=("no gpu.binary",)),
    # ---- unwritable -o: one line, exit 1
    OptCase("output-in-missing-directory", ["in.mlir", "-o", "no/such/dir/out.mlir"],
            {"in.mlir": GOOD}, errors=("cannot write no/such/dir/out.mlir",)),
    OptCase("output-is-a-directory", ["in.mlir", "-o", "."], {"in.mlir": GOOD},
            errors=("cannot write .: it is a directory",)),
    OptCase("output-under-a-file", ["in.mlir", "-o", "in.mlir/out.mlir"], {"in.mlir": GOOD},
            errors=("cannot write in.mlir/out.mlir",)),
    # ---- unreadable input
    OptCase("missing-input", ["nothere.mlir"], errors=("cannot read nothere.mlir",)),
    OptCase("input-is-a-directory", ["."], errors=("cannot read .",)),
    OptCase("bytecode-input", ["in.mlirbc"], {"in.mlirbc": b"ML\xefR\x00\x05garbage"},
            errors=("MLIR bytecode is not accepted",)),
    OptCase("nul-bytes", ["in.mlir"], {"in.mlir": b"func.func @f()\x00 { return }"},
            errors=("binary data",)),
    OptCase("latin1-input", ["in.mlir"], {"in.mlir": "// caf\xe9\n".encode("latin-1") + GOOD.encode()},
            errors=("not UTF-8",)),
    OptCase("elf-input", ["in.mlir"], {"in.mlir": b"\x7fELF\x02\x01\x01" + bytes(64)},
            errors=("binary data",)),
    OptCase("non-utf8-stdin", [], stdin=b"\xff\xfe" + GOOD.encode(),
            errors=("<stdin>: not UTF-8",)),
    OptCase("empty-input", ["in.mlir"], {"in.mlir": ""}, rc=0),
    OptCase("utf8-comment-accepted", ["in.mlir"], {"in.mlir": "// caf\u00e9 \u2713\n" + GOOD}, rc=0),
    OptCase("bom-input", ["in.mlir"], {"in.mlir": b"\xef\xbb\xbf" + GOOD.encode()},
            errors=("in.mlir:1:1:",)),
    OptCase("dense-array-of-index", ["in.mlir", "-o", "out.mlir"],
            {"in.mlir": "func.func @f() attributes {a = array<index: 1, 2>} { return }\n",
             "out.mlir": OLD}, errors=("in.mlir:1: array<index: ...> is not a dense array",)),
    OptCase("dense-array-of-f16", ["in.mlir"],
            {"in.mlir": "func.func @f() attributes {a = array<f16: 1.0>} { return }\n"},
            errors=("array<f16: ...> is not a dense array",)),
    OptCase("stray-at-in-tile-type", ["in.mlir"],
            {"in.mlir": 'func.func private @f() -> !tile.buf<array<i64: 4>, f16, "shared", '
                        '#tile.layout<"S[4:1]">@>\n'},
            errors=("in.mlir:1: '@' must start a symbol name",)),
    OptCase("at-in-layout-string-ok", ["in.mlir"],
            {"in.mlir": 'func.func private @f() -> !tile.buf<array<i64: 4>, f16, "local", '
                        '#tile.layout<"S[4:1@laneid]">>\n'}, rc=0),
    OptCase("unclosed-string-after-dialect-type", ["in.mlir", "-o", "out.mlir"],
            {"in.mlir": '!x = !llvm.ptr\n"abc\n', "out.mlir": OLD},
            errors=("in.mlir:2: a string literal is not closed on its line",)),
    OptCase("unclosed-string-at-eof", ["in.mlir"],
            {"in.mlir": 'func.func private @f() -> !llvm.ptr "'},
            errors=("in.mlir:1: a string literal is not closed",)),
    OptCase("quotes-and-at-in-strings-and-comments-ok", ["in.mlir"],
            {"in.mlir": 'func.func @f() attributes {s = "a\\"b // c @ d"} { return } // "x @\n'},
            rc=0),
    OptCase("llvm-array-type-ok", ["in.mlir"],
            {"in.mlir": "func.func private @f(!llvm.array<4 x f32>, tensor<2xindex>)\n"}, rc=0),
    # ---- argparse errors exit 2 with usage, never a traceback
    OptCase("bad-emit", ["--emit=sass", "in.mlir"], {"in.mlir": GOOD}, rc=2,
            errors=("invalid choice",)),
    OptCase("unknown-flag", ["--frobnicate", "in.mlir"], {"in.mlir": GOOD}, rc=2,
            errors=("unrecognized arguments",)),
]

# ---- nesting: deeper than the guard is refused before MLIR parses (the parser would overflow
# its stack), shallower nesting and brackets inside strings or comments are fine
for kind in ("regions", "arrays", "types", "dicts"):
    for depth in (300, 5000, 100000):
        CASES.append(OptCase(f"nesting-{kind}-{depth}", ["in.mlir", "-o", "out.mlir"],
                             {"in.mlir": nested(kind, depth), "out.mlir": OLD},
                             errors=("nesting deeper than 256 levels",)))
CASES += [
    OptCase("nesting-regions-100-ok", ["in.mlir"], {"in.mlir": nested("regions", 100)}, rc=0),
    OptCase("nesting-in-string-ok", ["in.mlir"],
            {"in.mlir": 'func.func @f() attributes {s = "' + "{[(<" * 2000 + '"} { return }\n'},
            rc=0),
    OptCase("nesting-in-comment-ok", ["in.mlir"], {"in.mlir": "// " + "{" * 5000 + "\n" + GOOD},
            rc=0),
    OptCase("nesting-split-chunk-line", ["in.mlir", "--split-input-file"],
            {"in.mlir": GOOD + "// -----\n" + nested("arrays", 400)},
            errors=("in.mlir:5: nesting deeper",)),
]

# ---- pass options are checked before anything reaches C++
BAD_OPTIONS = {
    "opt-level-99": ("tile-to-ptx{chip=sm_80 opt-level=99}", "opt-level of tile-to-ptx must be 0, 1, 2 or 3"),
    "opt-level-minus-1": ("tile-to-ptx{chip=sm_80 opt-level=-1}", "must be 0, 1, 2 or 3"),
    "opt-level-4": ("tile-to-ptx{opt-level=4}", "must be 0, 1, 2 or 3"),
    "opt-level-word": ("tile-to-ptx{opt-level=fast}", "must be 0, 1, 2 or 3"),
    "opt-level-float": ("tile-to-ptx{opt-level=1.5}", "must be 0, 1, 2 or 3"),
    "opt-level-empty": ("tile-to-ptx{opt-level=}", "must be 0, 1, 2 or 3"),
    "ptx-999": ("tile-to-ptx{chip=sm_90a ptx=999}", "unknown PTX ISA version 999"),
    "ptx-79": ("tile-to-ptx{chip=sm_90a ptx=79}", "unknown PTX ISA version 79"),
    "ptx-too-old-sm80": ("tile-to-ptx{chip=sm_80 ptx=60}", "sm_80 needs PTX ISA 7.8 or newer"),
    "ptx-too-old-sm90a": ("tile-to-ptx{chip=sm_90a ptx=78}", "sm_90a needs PTX ISA 8.0"),
    "ptx-too-old-sm100a": ("tile-dispatch{chip=sm_100a ptx=80}", "sm_100a needs PTX ISA 8.6"),
    "ptx-negative": ("tile-to-ptx{chip=sm_80 ptx=-80}", "unknown PTX ISA version -80"),
    "ptx-word": ("tile-to-ptx{chip=sm_80 ptx=new}", "ptx must be an integer"),
    "ptx-without-chip": ("tile-dispatch{ptx=80}", "option ptx needs chip as well"),
    "chip-unknown": ("tile-dispatch{chip=sm_42}", "unsupported chip 'sm_42'"),
    "chip-garbage": ("tile-dispatch{chip=hopper}", "unknown chip 'hopper'"),
    "chip-fake-arch-specific": ("tile-dispatch{chip=sm_80a}", "unknown chip 'sm_80a'"),
    "chip-empty": ("tile-check-target{chip=}", "unknown chip ''"),
    "option-unknown": ("tile-dispatch{chips=sm_80}", "unknown option 'chips' for tile-dispatch"),
    "option-without-value": ("tile-dispatch{chip}", "needs a value"),
    "option-twice": ("tile-dispatch{chip=sm_80 chip=sm_90a}", "option 'chip' of tile-dispatch is given twice"),
    "materialize-option": ("tile-materialize{chip=sm_80}", "its options: none"),
    "unbalanced-open": ("tile-dispatch{chip=sm_80", "unbalanced"),
    "unbalanced-close": ("tile-dispatch),canonicalize", "unbalanced"),
    "tile-pass-nested": ("gpu.module(tile-dispatch)", "tilemlir passes run on builtin.module only"),
    "upstream-nvvm-no-chip": ("gpu-lower-to-nvvm-pipeline", "without cubin-chip"),
    "upstream-nvvm-no-features": ("gpu-lower-to-nvvm-pipeline{cubin-chip=sm_80}", "uses PTX 6.0"),
    "upstream-nvvm-old-ptx": ("gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90a cubin-features=+ptx60}",
                              "sm_90a needs PTX ISA 8.0"),
    "upstream-nvvm-bad-chip": ("gpu-lower-to-nvvm-pipeline{cubin-chip=sm_999 cubin-features=+ptx80}",
                               "unsupported chip 'sm_999'"),
    "upstream-nvvm-opt-level": ("gpu-lower-to-nvvm-pipeline{cubin-chip=sm_80 cubin-features=+ptx78 opt-level=7}",
                                "opt-level of gpu-lower-to-nvvm-pipeline must be 0, 1, 2 or 3"),
    "upstream-nvvm-ptx-999": ("gpu-lower-to-nvvm-pipeline{cubin-chip=sm_80 cubin-features=+ptx999}",
                              "unknown PTX ISA version 999"),
    "upstream-unknown-option": ("canonicalize{bogus-option=1}",
                                "pass pipeline element 'canonicalize{bogus-option=1}': no such "
                                "option bogus-option"),
    "upstream-bad-option-value": ("canonicalize{max-iterations=abc}",
                                  "option max-iterations cannot be 'abc'"),
    "upstream-bad-flag-value": ("canonicalize{region-simplify=maybe}",
                                "option region-simplify cannot be 'maybe'"),
    "nested-unknown-pass": ("gpu.module(nosuch)", "'nosuch' is neither a tilemlir pass"),
    "nested-unknown-option": ("gpu.module(cse{x=1})", "no such option x"),
}
for name, (pipeline, message) in BAD_OPTIONS.items():
    CASES.append(OptCase(f"option-{name}", ["in.mlir", "-o", "out.mlir",
                                            f"--pass-pipeline=builtin.module({pipeline})"],
                         {"in.mlir": GOOD, "out.mlir": OLD}, errors=(message,)))


# ---- IR printing options: pass names are checked before anything runs
BAD_PRINTING = {
    "after-unknown": (["--mlir-print-ir-after=tile-dispath"],
                      "--mlir-print-ir-after: 'tile-dispath' is neither a tilemlir pass"),
    "before-unknown-upstream": (["--mlir-print-ir-before=cse,canonicalise"],
                                "--mlir-print-ir-before: 'canonicalise' is neither"),
    "before-pipeline": (["--mlir-print-ir-before=tile-to-ptx"],
                        "tile-to-ptx is a pipeline, not a pass"),
    "after-empty": (["--mlir-print-ir-after="], "--mlir-print-ir-after needs pass names"),
    "after-commas-only": (["--mlir-print-ir-after=,,"], "needs pass names"),
    "after-not-a-name": (["--mlir-print-ir-after=cse{x=1}"], "'cse{x=1}' is not a pass name"),
}
for name, (flags, message) in BAD_PRINTING.items():
    CASES.append(OptCase(f"printing-{name}", ["in.mlir", "-o", "out.mlir",
                                              "--pass-pipeline=builtin.module(cse)", *flags],
                         {"in.mlir": GOOD, "out.mlir": OLD}, errors=(message,)))


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case(batch, case_id):
    batch.check(case_id)


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


@pytest.mark.skipif(not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"),
                    reason="needs /proc/PID/task/PID/children (Linux)")
def test_a_killed_compiler_process_is_an_error_not_a_death(tmp_path):
    """tilemlir-opt runs the work in a child: when MLIR kills that child (here: a SIGSEGV sent
    while it waits for stdin), the command still exits 1 with an internal error and writes
    nothing."""
    out = tmp_path / "out.mlir"
    out.write_bytes(OLD)
    launcher = subprocess.Popen(
        [sys.executable, "-c", "import sys; from tilemlir.tools import opt; sys.argv[0] = "
         "'tilemlir-opt'; opt.main()", "-o", str(out)],
        stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not _children(launcher.pid):
        assert time.monotonic() < deadline, "no child process"
        time.sleep(0.02)
    os.kill(_children(launcher.pid)[0], signal.SIGSEGV)
    _, stderr = launcher.communicate(GOOD, timeout=30)
    assert launcher.returncode == 1
    assert "internal error: MLIR/LLVM killed the compiler process (SIGSEGV" in stderr
    assert "please report it" in stderr
    assert out.read_bytes() == OLD


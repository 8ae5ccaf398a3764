"""MLIR text given to Python goes through the same checks as tilemlir-opt's input: deeply nested
IR and the texts MLIR's parser or its bindings assert on get a SourceError in tilemlir.compile,
Executable.from_text and tilemlir.interpret, never a dead caller."""

import subprocess
import sys

import pytest

from harness import REPO, PyCase, child_environment, nested

ENTRIES = {
    "compile": "tilemlir.compile({text}, target='sm_80', cache=False)",
    "from-text": "from tilemlir.runtime import Executable\n"
                 "Executable.from_text({text}, target='sm_80')",
    "interpret": "tilemlir.interpret({text})",
}
# (id, an expression giving the text, words of the SourceError)
HAZARDS = [
    *[(f"nesting-{kind}-{depth}", f"nested({kind!r}, {depth})", "nesting deeper than 256 levels")
      for kind in ("regions", "arrays", "types", "dicts") for depth in (300, 100000)],
    ("dense-array-of-index", repr("func.func @f() attributes {a = array<index: 1, 2>} { return }"),
     "array<index: ...> is not a dense array"),
    ("stray-at", repr('func.func private @f() -> !tile.buf<array<i64: 4>, f16, "shared", '
                      '#tile.layout<"S[4:1]">@>'), "'@' must start a symbol name"),
    ("unclosed-string", repr('!x = !llvm.ptr\n"abc\n'), ":2: a string literal is not closed"),
    ("nul-character", repr("func.func @f() {\0 return }"), "a NUL character (offset 16)"),
    ("lone-surrogate", repr("func.func @f() { return }\n// \ud800"),
     ":2: not UTF-8 text (the lone surrogate '\\ud800'"),
]

CASES = [PyCase(f"{entry}-{hazard}", "from harness import nested\n" + code.format(text=text),
                "SourceError", ("<string>:", words))
         for entry, code in ENTRIES.items() for hazard, text, words in HAZARDS]
CASES += [
    PyCase(f"{entry}-not-text", code.format(text="b'func.func @f() { return }'"), "TypeError",
           ("cannot compile a bytes",) if entry == "compile" else
           ("cannot interpret a bytes",) if entry == "interpret" else
           ("MLIR source text must be a str, got bytes",))
    for entry, code in ENTRIES.items()
]


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case(batch, case_id):
    batch.check(case_id)


@pytest.mark.parametrize("entry", ["compile", "interpret"])
def test_deeply_nested_ir_leaves_the_caller_alive(entry, tmp_path):
    """The caller is a process of its own: it must exit normally after the SourceError."""
    code = ("import sys, tilemlir\nsys.path.insert(0, 'test/robustness')\n"
            "from harness import nested\nfrom tilemlir.ir.source import SourceError\n"
            "try:\n    " + ENTRIES[entry].format(text="nested('regions', 200000)") + "\n"
            "except SourceError as err:\n    print('refused:', err)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=120, env=child_environment(tmp_path))
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-2000:]}"
    assert "refused: <string>:257: nesting deeper than 256 levels" in result.stdout

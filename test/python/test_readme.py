"""The README stays true: its first kernel runs (the code block itself, taken from README.md
by its markers) and prints the output the README shows; on a GPU the compiled kernel agrees;
the set-up commands are the ones CI runs; the FileCheck example is the lit test it names."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def block(name: str) -> str:
    """The fenced code block between `<!-- name -->` and `<!-- /name -->`."""
    found = re.search(rf"<!-- {name} -->\n```\w*\n(.*?)```\n<!-- /{name} -->", README, re.S)
    assert found, f"README.md has no block marked <!-- {name} -->"
    return found.group(1)


def run_python(tmp_path: Path, code: str) -> str:
    # The kernel language reads the kernel's source, so the block runs from a file.
    script = tmp_path / "first.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_first_kernel_runs_on_the_cpu_and_prints_what_the_readme_shows(tmp_path):
    code = block("first-kernel")
    assert "tilemlir.interpret(gemm" in code
    assert run_python(tmp_path, code) == block("first-kernel-output")


@pytest.mark.gpu
def test_the_first_kernel_compiled_for_the_gpu_agrees(tmp_path):
    out = run_python(tmp_path, block("first-kernel") + block("first-kernel-gpu"))
    assert out.splitlines()[-1] == "GPU matches numpy: True"


def test_the_first_kernel_is_near_the_top_and_the_readme_is_short():
    lines = README.splitlines()
    assert len(lines) <= 200
    assert lines.index("<!-- /first-kernel -->") < 80


def test_the_setup_commands_are_the_ones_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    for command in ("python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' "
                    "&& tilemlir-demo", ". .venv/bin/activate && tools/run-tests"):
        assert f"    {command}" in README.splitlines()
        assert command in ci


def test_the_filecheck_example_is_taken_from_the_lit_test_it_names():
    source = (ROOT / "test" / "Dispatch" / "gemm-mma-sync.mlir").read_text().splitlines()
    lines = iter(source)
    for line in block("filecheck-example").splitlines():
        assert any(line == other for other in lines), \
            f"not in test/Dispatch/gemm-mma-sync.mlir (in this order): {line}"

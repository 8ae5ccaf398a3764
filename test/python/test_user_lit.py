"""tilemlir-lit: a user's own directory of RUN/CHECK tests runs with one command, with no lit
configuration of theirs (the packaged one, tilemlir.tools.lit.configure, sets up the tools)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "mma_demo.mlir"


def tilemlir_lit(*args, cwd):
    # The console script runs tilemlir.tools.lit:main; from a checkout, its module.
    return subprocess.run([sys.executable, "-m", "tilemlir.tools.lit", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent)
                               + ":/usr/bin:/bin"})


@pytest.fixture
def suite(tmp_path):
    tests = tmp_path / "mytests"
    (tests / "deeper").mkdir(parents=True)
    (tests / "dispatch.mlir").write_text(
        f"// RUN: tilemlir-opt {DEMO} --pass-pipeline='builtin.module(tile-dispatch{{chip=sm_80}})'"
        f" | FileCheck %s\n// CHECK: nvvm.mma.sync\n")
    (tests / "deeper" / "verify.mlir").write_text(
        "// RUN: tilemlir-opt %s --verify-diagnostics\n"
        "// expected-error@below {{custom op 'tile.nonsense' is unknown}}\n"
        "tile.nonsense\n")
    return tests


def test_a_users_directory_runs_with_one_command(suite, tmp_path):
    done = tilemlir_lit("-v", suite, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS: tilemlir-user :: dispatch.mlir" in done.stdout
    assert "PASS: tilemlir-user :: deeper/verify.mlir" in done.stdout
    assert not list(suite.rglob("Output")) and not list(suite.rglob("lit.cfg.py"))


def test_a_failing_check_fails_the_run_and_single_files_run_alone(suite, tmp_path):
    (suite / "wrong.mlir").write_text("// RUN: echo hello | FileCheck %s\n// CHECK: goodbye\n")
    done = tilemlir_lit(suite, cwd=tmp_path)
    assert done.returncode == 1 and "FAIL: tilemlir-user :: wrong.mlir" in done.stdout
    alone = tilemlir_lit("-v", suite / "deeper" / "verify.mlir", cwd=tmp_path)
    assert alone.returncode == 0 and "Passed: 1" in alone.stdout, alone.stdout + alone.stderr


def test_a_local_config_still_applies(suite, tmp_path):
    (suite / "deeper" / "lit.local.cfg").write_text("config.suffixes = ['.mlir', '.ir']\n")
    (suite / "deeper" / "extra.ir").write_text("// RUN: true\n")
    done = tilemlir_lit("-v", suite, cwd=tmp_path)
    assert "PASS: tilemlir-user :: deeper/extra.ir" in done.stdout, done.stdout + done.stderr


def test_no_tests_is_an_error_with_the_usage(tmp_path):
    done = tilemlir_lit(tmp_path / "missing", cwd=tmp_path)
    assert done.returncode == 2
    assert "tilemlir-lit mytests" in done.stderr and "does not exist" in done.stderr

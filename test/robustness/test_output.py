"""tilemlir-opt -o as mlir-opt's: devices, FIFOs, /dev/stdout and links are written through and
never replaced, a regular file is replaced whole (keeping its mode) or left as it was, and a
read-only file is refused. Each case runs the command (its launcher and compiler process) in a
child process; the non-root cases drop privileges in a forked child."""

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from harness import OptCase, child_environment

GOOD = "func.func @f() {\n  return\n}\n"
GOOD_OUT = "module {\n  func.func @f() {\n    return\n  }\n}\n"
SYNTAX = "func.func @f() { %x = arith.addi %y, %y : i32 }\n"
OLD = b"previous contents\n"
NOBODY = 65534
LAUNCHER = "import sys; from tilemlir.tools import opt; sys.argv[0] = 'tilemlir-opt'; opt.main()"


def opt(*argv, cwd, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """tilemlir-opt as a user runs it: the launcher, which starts the compiler process."""
    return subprocess.run([sys.executable, "-c", LAUNCHER, *map(str, argv)], cwd=cwd,
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120,
                          env=child_environment(Path(cwd) / ".cache"))


@pytest.fixture
def work(tmp_path):
    (tmp_path / "in.mlir").write_text(GOOD)
    (tmp_path / "bad.mlir").write_text(SYNTAX)
    return tmp_path


def _clean(result) -> None:
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, \
        result.stderr


# ---------------------------------------------------------------- devices and descriptors
def test_dev_null_as_this_user_stays_a_device(work):
    before = os.stat("/dev/null")
    result = opt("in.mlir", "-o", "/dev/null", cwd=work)
    assert result.returncode == 0, result.stderr
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert stat.S_IMODE(after.st_mode) == stat.S_IMODE(before.st_mode)


def test_dev_null_as_root_stays_a_device(work):
    if os.geteuid() != 0:
        pytest.skip("runs as root only (the non-root case is the test above)")
    result = opt("in.mlir", "-o", "/dev/null", cwd=work)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def _as_nobody(code: str, directory: Path) -> subprocess.CompletedProcess:
    """`code` in a Python child that drops to uid/gid 65534 (nobody) once tilemlir and MLIR
    are loaded (the interpreter may live where nobody cannot start it, e.g. under /root), then
    runs tilemlir-opt's `run` in that process."""
    script = ("import os, sys\n"
              "from tilemlir.tools import opt\n"
              "import mlir.ir, tilemlir.ir.context, tilemlir.pipeline\n"
              f"os.chdir({str(directory)!r})\n"
              f"os.setgroups([]); os.setgid({NOBODY}); os.setuid({NOBODY})\n"
              + code)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, env=child_environment(directory / ".cache"))


@pytest.fixture
def shared_dir():
    """A directory a dropped-privilege child can read (pytest's tmp_path is root's only)."""
    if os.geteuid() != 0:
        pytest.skip("dropping to another user needs root; as non-root the launcher tests "
                    "above already run as a user")
    directory = Path(tempfile.mkdtemp(prefix="tilemlir-out-"))
    directory.chmod(0o755)
    (directory / "in.mlir").write_text(GOOD)
    (directory / "in.mlir").chmod(0o644)
    yield directory
    subprocess.run(["rm", "-rf", str(directory)], check=False)


def test_dev_null_as_nobody_stays_a_device(shared_dir):
    result = _as_nobody("sys.exit(opt.run(['in.mlir', '-o', '/dev/null']))", shared_dir)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_file_nobody_may_not_write_is_refused_and_unchanged(shared_dir):
    target = shared_dir / "root.mlir"
    target.write_bytes(OLD)
    target.chmod(0o644)                          # root's, readable by all, writable by root only
    result = _as_nobody("sys.exit(opt.run(['in.mlir', '-o', 'root.mlir']))", shared_dir)
    assert result.returncode == 1
    assert "tilemlir-opt: cannot write root.mlir: permission denied; it was left as it was" \
        in result.stderr, result.stderr
    assert target.read_bytes() == OLD and target.stat().st_uid == 0


def test_a_new_file_in_a_directory_nobody_may_not_write_is_an_error(shared_dir):
    result = _as_nobody("sys.exit(opt.run(['in.mlir', '-o', 'new.mlir']))", shared_dir)
    assert result.returncode == 1
    assert "tilemlir-opt: cannot write new.mlir: Permission denied" in result.stderr
    assert not (shared_dir / "new.mlir").exists()


def test_dev_stdout_through_a_pipe(work):
    pipeline = subprocess.run(f"{sys.executable} -c \"{LAUNCHER}\" in.mlir -o /dev/stdout | cat",
                              shell=True, cwd=work, capture_output=True, text=True, timeout=120,
                              env=child_environment(work / ".cache"))
    assert pipeline.returncode == 0, pipeline.stderr
    assert pipeline.stdout == GOOD_OUT


def test_dev_stdout_appended_to_a_log_keeps_the_log(work):
    (work / "log.txt").write_bytes(OLD)
    with open(work / "log.txt", "a") as log:
        result = opt("in.mlir", "-o", "/dev/stdout", cwd=work, stdout=log)
    assert result.returncode == 0, result.stderr
    assert (work / "log.txt").read_bytes() == OLD + GOOD_OUT.encode()


def test_dev_fd_3(work):
    out = os.open(work / "fd3.txt", os.O_WRONLY | os.O_CREAT, 0o644)
    os.set_inheritable(out, True)
    try:
        code = f"import os; os.dup2({out}, 3); " + LAUNCHER
        result = subprocess.run([sys.executable, "-c", code, "in.mlir", "-o", "/dev/fd/3"],
                                cwd=work, capture_output=True, text=True, timeout=120,
                                close_fds=False, env=child_environment(work / ".cache"))
    finally:
        os.close(out)
    assert result.returncode == 0, result.stderr
    assert (work / "fd3.txt").read_text() == GOOD_OUT


def test_a_fifo_is_written_through(work):
    fifo = work / "out.fifo"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE, text=True)
    result = opt("in.mlir", "-o", "out.fifo", cwd=work)
    out, _ = reader.communicate(timeout=60)
    assert result.returncode == 0, result.stderr
    assert out == GOOD_OUT and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_failing_run_writes_nothing_to_a_device(work):
    result = opt("bad.mlir", "-o", "/dev/null", cwd=work)
    assert result.returncode == 1
    assert "/dev/null not written (the run failed)" in result.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


# ---------------------------------------------------------------- regular files and links
def test_a_read_only_file_is_refused_and_unchanged(work):
    target = work / "ro.mlir"
    target.write_bytes(OLD)
    target.chmod(0o444)
    result = opt("in.mlir", "-o", "ro.mlir", cwd=work)
    _clean(result)
    assert result.returncode == 1
    assert "tilemlir-opt: cannot write ro.mlir: the file is read-only; it was left as it was" \
        in result.stderr
    assert target.read_bytes() == OLD and stat.S_IMODE(target.stat().st_mode) == 0o444


def test_a_read_only_file_behind_a_link_is_refused(work):
    (work / "ro.mlir").write_bytes(OLD)
    (work / "ro.mlir").chmod(0o400)
    (work / "link.mlir").symlink_to("ro.mlir")
    result = opt("in.mlir", "-o", "link.mlir", cwd=work)
    assert result.returncode == 1 and "cannot write link.mlir: the file is read-only" \
        in result.stderr
    assert (work / "link.mlir").is_symlink() and (work / "ro.mlir").read_bytes() == OLD


def test_the_mode_is_kept(work):
    target = work / "out.mlir"
    target.write_bytes(OLD)
    target.chmod(0o640)
    result = opt("in.mlir", "-o", "out.mlir", cwd=work)
    assert result.returncode == 0, result.stderr
    assert target.read_text() == GOOD_OUT and stat.S_IMODE(target.stat().st_mode) == 0o640


def test_a_link_is_written_through_not_replaced(work):
    (work / "target.mlir").write_bytes(OLD)
    (work / "link.mlir").symlink_to("target.mlir")
    result = opt("in.mlir", "-o", "link.mlir", cwd=work)
    assert result.returncode == 0, result.stderr
    assert (work / "link.mlir").is_symlink()
    assert (work / "target.mlir").read_text() == GOOD_OUT


def test_a_dangling_link_creates_its_target(work):
    (work / "link.mlir").symlink_to("made.mlir")
    result = opt("in.mlir", "-o", "link.mlir", cwd=work)
    assert result.returncode == 0, result.stderr
    assert (work / "link.mlir").is_symlink() and (work / "made.mlir").read_text() == GOOD_OUT


def test_a_hard_linked_file_is_written_in_place(work):
    (work / "a.mlir").write_bytes(OLD)
    os.link(work / "a.mlir", work / "b.mlir")
    result = opt("in.mlir", "-o", "a.mlir", cwd=work)
    assert result.returncode == 0, result.stderr
    assert (work / "b.mlir").read_text() == GOOD_OUT        # the same file under both names


def test_a_writable_file_in_a_read_only_directory_is_written_in_place(work):
    if os.geteuid() == 0:
        pytest.skip("root writes into any directory")
    sub = work / "sub"
    sub.mkdir()
    (sub / "out.mlir").write_bytes(OLD)
    sub.chmod(0o555)
    try:
        result = opt("in.mlir", "-o", "sub/out.mlir", cwd=work)
    finally:
        sub.chmod(0o755)
    assert result.returncode == 0, result.stderr
    assert (sub / "out.mlir").read_text() == GOOD_OUT


def test_no_temporary_file_is_left(work):
    for argv in (["in.mlir", "-o", "out.mlir"], ["bad.mlir", "-o", "out.mlir"]):
        opt(*argv, cwd=work)
    assert sorted(p.name for p in work.iterdir() if not p.name.startswith(".cache")) == \
        ["bad.mlir", "in.mlir", "out.mlir"]


CASES = [
    OptCase("output-socket-path-missing-dir", ["in.mlir", "-o", "nowhere/sock"],
            {"in.mlir": GOOD}, errors=("cannot write nowhere/sock: No such file or directory",)),
    OptCase("output-dev-fd-closed", ["in.mlir", "-o", "/dev/fd/97"], {"in.mlir": GOOD},
            errors=("cannot write /dev/fd/97: Bad file descriptor",)),
    OptCase("output-dev-full", ["in.mlir", "-o", "/dev/full"], {"in.mlir": GOOD},
            errors=("cannot write /dev/full: No space left on device",)),
]


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case(batch, case_id):
    batch.check(case_id)


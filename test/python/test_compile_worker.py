"""The compiler process (tilemlir.runtime.compile_worker): lowering happens there, so a fatal
error in MLIR/LLVM ends it and not the caller; its errors reach the caller with their types
and messages; a dead worker is replaced by the next compile."""

import os

import pytest
from mlir import ir

import tilemlir
from tilemlir.runtime import compile_worker
from tilemlir.runtime.compile_worker import CompilerCrash

from test_dispatch import _GEMM

BAD_GEMM = _GEMM.replace("DTYPE", "f16").replace("ALPHA", "2.0")


class AbortWhenUnpickled:
    """A request whose unpickling aborts the process that reads it: a stand-in for an LLVM
    fatal error, which no test input may be relied on to trigger for ever."""

    def __reduce__(self):
        return os.abort, ()


@pytest.fixture(autouse=True)
def out_of_process(monkeypatch):
    monkeypatch.delenv("TILEMLIR_COMPILE_IN_PROCESS", raising=False)


def test_a_worker_death_is_an_error_and_the_next_compile_works(isolated_cache):
    with pytest.raises(CompilerCrash, match=r"internal error: MLIR/LLVM ended the compiler "
                                            r"process \(SIGABRT"):
        compile_worker._worker.call(AbortWhenUnpickled())
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    kernel = tilemlir.compile(gemm_16x8x16, target="sm_80", cache=False)
    assert "mma.sync.aligned.m16n8k16" in kernel.ptx


@pytest.mark.parametrize("where", ["worker", "in-process"])
def test_dispatch_errors_are_mlir_errors_with_their_diagnostics(isolated_cache, monkeypatch,
                                                                where):
    if where == "in-process":
        monkeypatch.setenv("TILEMLIR_COMPILE_IN_PROCESS", "1")
    with pytest.raises(ir.MLIRError) as err:
        tilemlir.compile(BAD_GEMM, target="sm_80", cache=False)
    (diagnostic,) = err.value.error_diagnostics
    assert str(diagnostic.location) == 'loc("-":10:5)'
    assert diagnostic.message.startswith("no variant of 'tile.gemm' can lower this op for sm_80")
    assert 'error: "-":10:5: no variant of \'tile.gemm\'' in str(err.value)


def test_dumps_of_every_pass_come_back_from_the_worker(isolated_cache, monkeypatch, tmp_path):
    """A dump asked for after the worker started: the IR after each pass, written there."""
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    tilemlir.compile(gemm_16x8x16, target="sm_80", cache=False)      # the worker is up
    monkeypatch.setenv("TILEMLIR_DUMP", "ir")
    monkeypatch.setenv("TILEMLIR_DUMP_DIR", str(tmp_path / "dumps"))
    kernel = tilemlir.compile(gemm_16x8x16, target="sm_80", cache=False)
    assert any((kernel.compile_info.dump_dir / "passes").rglob("*"))


def test_a_forked_child_compiles_with_a_worker_of_its_own(isolated_cache):
    """After fork, the parent's worker and pipes stay the parent's (both go on compiling)."""
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    tilemlir.compile(gemm_16x8x16, target="sm_80", cache=False)      # the parent's worker
    parent_worker = compile_worker._worker._process
    pid = os.fork()
    if pid == 0:                                                     # the child
        status = 1
        try:
            ok = compile_worker._worker._process is None
            kernel = tilemlir.compile(gemm_16x8x16, target="sm_80", cache=False)
            status = 0 if ok and "mma.sync" in kernel.ptx else 1
            compile_worker._worker.close()
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert compile_worker._worker._process is parent_worker
    assert "mma.sync" in tilemlir.compile(gemm_16x8x16, target="sm_80", cache=False).ptx


def test_a_compiler_process_that_cannot_start_falls_back_with_a_warning(isolated_cache,
                                                                        monkeypatch):
    """A worker that exits before answering (an import failure, say) is not a crash: the
    compile goes on in this process, with a CompilerProcessWarning saying so."""
    import subprocess
    import sys
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    from tilemlir.runtime.compile_worker import CompilerProcessWarning

    def broken_start():
        return subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    compile_worker._worker.close()
    monkeypatch.setattr(compile_worker._worker, "_start", broken_start)
    monkeypatch.setattr(compile_worker._worker, "unusable", False)
    with pytest.warns(CompilerProcessWarning, match="exited with status 3"):
        kernel = tilemlir.compile(gemm_16x8x16, target="sm_80", cache=False)
    assert "mma.sync" in kernel.ptx and compile_worker._worker.unusable


def test_the_worker_imports_the_callers_tilemlir_not_the_working_directorys(
        isolated_cache, monkeypatch, tmp_path):
    """`python -m` would put the working directory first on the worker's path: a checkout
    there (here a package that exits at once) must not replace the tilemlir the caller runs."""
    import warnings
    from tilemlir.kernels.mma_demo import gemm_16x8x16
    fake = tmp_path / "tilemlir"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise SystemExit(7)\n")
    compile_worker._worker.close()
    monkeypatch.setattr(compile_worker._worker, "unusable", False)
    monkeypatch.chdir(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # no CompilerProcessWarning: it started
        kernel = tilemlir.compile(gemm_16x8x16, target="sm_80", cache=False)
    assert "mma.sync" in kernel.ptx and not compile_worker._worker.unusable
    compile_worker._worker.close()

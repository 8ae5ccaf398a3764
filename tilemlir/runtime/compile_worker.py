"""Lowering in a child process, so that a fatal error in MLIR or LLVM (an assertion, an abort,
a crash: nothing the Python bindings can catch) ends that process and not the caller's.

`tilemlir.compile` traces a kernel in the caller's process (the kernel is Python) and hands the
tile IR to a worker, `python -m tilemlir.runtime.compile_worker`, started on the first compile
that misses the caches and kept for the next ones. The worker lowers it and answers with the
files of a cache entry (signatures, PTX, the IR after each pass if asked), or with the exception
the lowering raised, which the caller re-raises. If the worker dies, the compile raises
CompilerCrash naming the signal (MLIR's own message is on stderr) and the next compile starts a
new worker. TILEMLIR_COMPILE_IN_PROCESS=1 lowers in the caller's process instead (to step
through the passes in a debugger).

Requests and answers are pickles with an 8-byte length, on the worker's stdin and its original
stdout; the worker points file descriptor 1 at stderr, so that anything MLIR prints cannot
corrupt them.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import pickle
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from pathlib import Path

from mlir import ir

from tilemlir.env import flag as env_flag
from tilemlir.ir.context import make_context
from tilemlir.pipeline import PipelineOptions
from tilemlir.runtime.executable import Executable


class CompilerCrash(RuntimeError):
    """MLIR or LLVM ended the compiler process: an internal error, not the caller's."""


@dataclasses.dataclass(frozen=True)
class DiagnosticRecord:
    """An MLIR diagnostic brought out of the compiler process: what ir.DiagnosticInfo offers,
    the location as its text ("loc(...)"), so that ir.MLIRError prints it the same way."""
    severity: str
    location: str
    message: str
    notes: tuple

    @staticmethod
    def of(diagnostic) -> "DiagnosticRecord":
        return DiagnosticRecord(str(diagnostic.severity), str(diagnostic.location),
                                diagnostic.message,
                                tuple(DiagnosticRecord.of(n) for n in diagnostic.notes))


def entry_files(input_ir: str, options: PipelineOptions,
                with_passes: bool) -> dict[str, bytes]:
    """Lowers tile IR (text, with locations) and returns a cache entry's files by name."""
    with make_context():
        module = ir.Module.parse(input_ir)
        with tempfile.TemporaryDirectory() as passes:
            exe = Executable.compile(module, options, dump_dir=passes if with_passes else None)
            files = {"signatures.json": json.dumps(
                         [dataclasses.asdict(s) for s in exe.signatures.values()]).encode(),
                     "input.mlir": input_ir.encode()}
            files.update({f"{module}.ptx": ptx.encode() for module, ptx in exe.ptx.items()})
            if with_passes:
                root = Path(passes)
                files.update({f"passes/{p.relative_to(root).as_posix()}": p.read_bytes()
                              for p in sorted(root.rglob("*")) if p.is_file()})
    return files


def lower(input_ir: str, options: PipelineOptions, with_passes: bool) -> dict[str, bytes]:
    """entry_files(...) in the worker (or here, with TILEMLIR_COMPILE_IN_PROCESS=1)."""
    env_flag("TILEMLIR_DEBUG")                      # a bad value is an error at once
    if env_flag("TILEMLIR_COMPILE_IN_PROCESS") or _worker.unusable:
        return entry_files(input_ir, options, with_passes)
    try:
        return _worker.call((input_ir, options, with_passes,
                             {k: v for k, v in os.environ.items() if k.startswith("TILEMLIR_")}))
    except _CannotStart as why:
        warnings.warn(f"tilemlir: the compiler process cannot start ({why}); lowering in this "
                      f"process from now on, where a fatal error in MLIR or LLVM would end it",
                      CompilerProcessWarning, stacklevel=3)
        _worker.unusable = True
        return entry_files(input_ir, options, with_passes)


class CompilerProcessWarning(UserWarning):
    """The compiler process could not be started; compiles go on in this process."""


class _CannotStart(Exception):
    pass


# ------------------------------------------------------------------------- the caller's side
def _send(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def _receive(stream):
    """The next message, or None at the end of the stream."""
    head = stream.read(8)
    if len(head) < 8:
        return None
    (size,) = struct.unpack(">Q", head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


class _Worker:
    def __init__(self):
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None
        self._answered = False
        self.unusable = False          # it could not start here: lower in this process

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ)
        # The same tilemlir and MLIR as this process, wherever they were imported from: this
        # process's sys.path, and -P so that `-m` does not put the working directory ahead of
        # it (a checkout there would shadow the tilemlir the caller imported).
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if isinstance(p, str) and p)
        return subprocess.Popen([sys.executable, "-P", "-m", "tilemlir.runtime.compile_worker"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def call(self, request):
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                try:
                    self._process = self._start()
                except OSError as err:
                    raise _CannotStart(f"{sys.executable}: {err}") from None
                self._answered = False
            process = self._process
            try:
                _send(process.stdin, request)
                answer = _receive(process.stdout)
            except (BrokenPipeError, OSError):
                answer = None
            if answer is None:
                code = process.wait()
                self._process = None
                if code > 0 and not self._answered:     # it never ran: an import failed, ...
                    raise _CannotStart(f"{sys.executable} -P -m tilemlir.runtime.compile_worker "
                                       f"exited with status {code}; its message is on stderr")
                raise CompilerCrash(f"internal error: MLIR/LLVM ended the compiler process "
                                    f"({_describe(code)}; its own message, if any, is on "
                                    f"stderr): a bug in tilemlir, please report it with the "
                                    f"kernel") from None
        self._answered = True
        status, payload, trace = answer
        if status == "ok":
            return payload
        if env_flag("TILEMLIR_DEBUG"):
            print(f"tilemlir: in the compiler process:\n{trace}", file=sys.stderr)
        if status == "mlir-error":          # the bindings' own exception type, as in-process
            message, diagnostics = payload
            raise ir.MLIRError(message, list(diagnostics))
        raise payload

    def forget(self) -> None:
        """In a forked child: the worker and its pipes are the parent's; start anew."""
        self._lock = threading.Lock()
        self._process = None

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.stdin.close()
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()


def _describe(code: int) -> str:
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


_worker = _Worker()
atexit.register(_worker.close)
os.register_at_fork(after_in_child=_worker.forget)     # e.g. multiprocessing's fork workers


# ------------------------------------------------------------------------- the worker's side
def _portable(error: BaseException) -> BaseException:
    """`error` if it survives pickling, else a RuntimeError with its type and message."""
    try:
        pickle.loads(pickle.dumps(error))
        return error
    except Exception:
        return RuntimeError(f"{type(error).__name__}: {error}")


def main() -> None:
    requests = os.fdopen(os.dup(0), "rb")
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)                           # MLIR's and LLVM's prints go to stderr
    sys.stdout = sys.stderr
    base_env = {k: v for k, v in os.environ.items() if k.startswith("TILEMLIR_")}
    while True:
        request = _receive(requests)
        if request is None:
            return
        input_ir, options, with_passes, env = request
        for k in set(base_env) | set(env):    # the caller's TILEMLIR_* settings of this call
            if k in env:
                os.environ[k] = env[k]
            else:
                os.environ.pop(k, None)
        base_env = env
        try:
            answer = ("ok", entry_files(input_ir, options, with_passes), "")
        except ir.MLIRError as error:       # its DiagnosticInfos live in this process only
            answer = ("mlir-error", (error.message, [DiagnosticRecord.of(d) for d in
                                                     error.error_diagnostics]),
                      traceback.format_exc())
        except Exception as error:          # the caller re-raises it
            answer = ("error", _portable(error), traceback.format_exc())
        _send(answers, answer)


if __name__ == "__main__":
    # Through the module's own name, so that what it pickles names tilemlir's classes.
    from tilemlir.runtime import compile_worker
    compile_worker.main()

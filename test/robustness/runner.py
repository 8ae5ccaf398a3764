"""Runs many robustness cases in child processes, so an abort or a hang fails one case instead
of killing the caller.

A case is a dict: {"id", "kind": "opt" | "py", "cwd", and "argv" + optional "stdin" (base64)
for tilemlir-opt, or "code" for Python (run with `tilemlir` imported)}. A child process runs
cases one after another in-process (cheap: one MLIR start-up for many cases) and reports each
as a JSON line; when a case kills the child, or does not finish within the timeout, the parent
records it as a death or a hang and starts a new child at the next case.

Each result: {"id", "outcome": "ok" | "death" | "hang", "rc" (opt: exit status), "stdout",
"stderr", "exception" (py: "Type: message" or None), "classes" (py: the exception's classes,
most derived first), "seconds"}.

    python test/robustness/runner.py CASES.json START   # the child side
"""

from __future__ import annotations

import base64
import io
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout

MARK = "@@RESULT "


# ------------------------------------------------------------------------------ child side
def _run_opt(case) -> dict:
    from tilemlir.tools import opt
    data = base64.b64decode(case.get("stdin", ""))
    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(data))
    sys.argv = ["tilemlir-opt"] + case["argv"]
    rc = None
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                opt.run_in_process()
            except SystemExit as exit_:
                rc = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        sys.stdin = saved_stdin
    return {"rc": rc, "stdout": out.getvalue()[-4000:], "stderr": err.getvalue()[-4000:]}


def _run_py(case) -> dict:
    import tilemlir
    out, err = io.StringIO(), io.StringIO()
    exception, classes = None, []
    with redirect_stdout(out), redirect_stderr(err):
        try:
            exec(compile(case["code"], f"<case {case['id']}>", "exec"), {"tilemlir": tilemlir})
        except Exception as exc:  # the outcome under test
            exception = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
            classes = [f"{c.__module__}.{c.__name__}" for c in type(exc).__mro__]
    return {"exception": exception, "classes": classes, "stdout": out.getvalue()[-4000:],
            "stderr": err.getvalue()[-4000:]}


def child_main(path: str, start: int) -> None:
    with open(path) as f:
        cases = json.load(f)
    report = os.fdopen(os.dup(1), "w")
    home = os.getcwd()
    for case in cases[start:]:
        began = time.perf_counter()
        os.chdir(case.get("cwd") or home)
        try:
            result = _run_opt(case) if case["kind"] == "opt" else _run_py(case)
        finally:
            os.chdir(home)
        result.update(id=case["id"], outcome="ok", seconds=time.perf_counter() - began)
        report.write("\n" + MARK + json.dumps(result) + "\n")
        report.flush()


# ------------------------------------------------------------------------------ parent side
def run_cases(cases: list[dict], timeout: float = 60.0, env: dict | None = None) -> dict:
    """{case id: result} for every case, each run in a child process (restarted after a death
    or a hang)."""
    results: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cases.json")
        with open(path, "w") as f:
            json.dump(cases, f)
        start = 0
        while start < len(cases):
            start = _one_child(cases, start, path, timeout, env, results, tmp)
    return results


def _one_child(cases, start, path, timeout, env, results, tmp) -> int:
    """Runs cases from `start` in one child; returns where the next child must start."""
    log_path = os.path.join(tmp, f"stderr-{start}.txt")
    with open(log_path, "wb") as log:
        child = subprocess.Popen([sys.executable, os.path.abspath(__file__), path, str(start)],
                                 stdout=subprocess.PIPE, stderr=log, env=env)
    buffer = b""
    index = start
    deadline = time.monotonic() + timeout
    try:
        while index < len(cases):
            ready, _, _ = select.select([child.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                child.kill()
                child.wait()
                results[cases[index]["id"]] = {"id": cases[index]["id"], "outcome": "hang",
                                               "seconds": timeout}
                return index + 1
            chunk = os.read(child.stdout.fileno(), 1 << 16)
            if not chunk:
                child.wait()
                with open(log_path, "rb") as log:
                    tail = log.read()[-2000:].decode(errors="replace")
                results[cases[index]["id"]] = {"id": cases[index]["id"], "outcome": "death",
                                               "rc": child.returncode, "stderr": tail}
                return index + 1
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                text = line.decode(errors="replace")
                if MARK in text:  # output a case printed itself may precede the mark
                    result = json.loads(text[text.index(MARK) + len(MARK):])
                    results[result["id"]] = result
                    index += 1
                    deadline = time.monotonic() + timeout
        return index
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()


if __name__ == "__main__":
    child_main(sys.argv[1], int(sys.argv[2]))

"""The machinery of the robustness suite: cases run in child processes (runner.py), each in
its own directory, and the checks every case gets: the expected exit status or exception, the
expected words in the message, no traceback, no 'internal error', no file written or lost."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from pathlib import Path

from runner import run_cases

REPO = Path(__file__).resolve().parents[2]


@dataclass
class OptCase:
    """tilemlir-opt with `argv` in a directory holding `files`; by default it must fail (exit 1)
    with every string of `errors` in its stderr and leave the directory exactly as it was."""
    id: str
    argv: list
    files: dict = field(default_factory=dict)     # name -> bytes or str
    stdin: bytes = b""
    rc: int = 1
    errors: tuple = ()
    after: dict | None = None                      # expected files afterwards (None: unchanged)


@dataclass
class PyCase:
    """Python code that must raise `exception` (a class name, module-qualified or not, of the
    exception or a base class) with every string of `errors` in its message; exception=None: it
    must run without one."""
    id: str
    code: str
    exception: str | None
    errors: tuple = ()


def nested(kind: str, depth: int) -> str:
    """MLIR text nesting `depth` levels of regions, arrays, types or dictionaries."""
    if kind == "regions":
        return ("func.func @f() {\n" + "scf.execute_region {\n" * depth
                + "scf.yield\n}\n" * depth + "return\n}\n")
    if kind == "arrays":
        return "func.func @f() attributes {a = " + "[" * depth + "]" * depth + "} { return }\n"
    if kind == "types":
        return "func.func private @f() -> " + "tuple<" * depth + "i32" + ">" * depth + "\n"
    if kind == "dicts":
        return ("func.func @f() attributes {a = " + "{b = " * depth + "unit" + "}" * depth
                + "} { return }\n")
    raise ValueError(kind)


def child_environment(cache_dir: Path) -> dict:
    """The environment of the children: this checkout's tilemlir, a private compile cache, and
    no TILEMLIR_DEBUG (which would turn internal errors into tracebacks)."""
    env = dict(os.environ)
    env.pop("TILEMLIR_DEBUG", None)
    env["TILEMLIR_CACHE_DIR"] = str(cache_dir)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    return env


def _as_bytes(data) -> bytes:
    return data.encode() if isinstance(data, str) else data


def _snapshot(directory: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


class Batch:
    """Runs a list of cases once (in child processes) and checks them one by one."""

    def __init__(self, cases, root: Path, timeout: float = 60.0):
        self.cases = {c.id: c for c in cases}
        assert len(self.cases) == len(cases), "duplicate case ids"
        self.dirs = {}
        specs = []
        for case in cases:
            if isinstance(case, OptCase):
                d = root / case.id
                d.mkdir(parents=True)
                for name, data in case.files.items():
                    (d / name).write_bytes(_as_bytes(data))
                self.dirs[case.id] = (d, _snapshot(d))
                specs.append({"id": case.id, "kind": "opt", "cwd": str(d), "argv": case.argv,
                              "stdin": base64.b64encode(case.stdin).decode()})
            else:
                specs.append({"id": case.id, "kind": "py", "code": case.code})
        self.results = run_cases(specs, timeout=timeout, env=child_environment(root / "cache"))

    def check(self, case_id: str) -> dict:
        case, result = self.cases[case_id], self.results[case_id]
        assert result["outcome"] == "ok", f"{result['outcome']}: {result.get('stderr', '')}"
        if isinstance(case, OptCase):
            stderr = result["stderr"]
            assert result["rc"] == case.rc, f"exit {result['rc']}, stderr:\n{stderr}"
            for text in case.errors:
                assert text in stderr, f"{text!r} not in stderr:\n{stderr}"
            assert "Traceback" not in stderr and "internal error" not in stderr, stderr
            d, before = self.dirs[case_id]
            expected = before if case.after is None else {
                k: _as_bytes(v) for k, v in case.after.items()}
            assert _snapshot(d) == expected, "files written or lost"
        else:
            raised = result["exception"]
            if case.exception is None:
                assert raised is None, raised
            else:
                assert raised is not None, "no exception"
                message = raised.partition(": ")[2]
                assert any(c == case.exception or c.endswith("." + case.exception)
                           for c in result["classes"]), raised
                for text in case.errors:
                    assert text in message, f"{text!r} not in {raised!r}"
                assert "internal error" not in message, raised
        return result

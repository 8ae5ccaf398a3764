# lit configuration for tilemlir's FileCheck tests (test/**/*.mlir).
#
#   lit -sv test                          # tilemlir from this checkout
#   lit -sv --param installed=1 test      # tilemlir as installed (a wheel): run with that
#                                         # environment's lit; this checkout's code is not used
#
# The set-up (tools on the PATH of RUN lines, features "ptxas" and "gpu") is the one users'
# own suites get from `tilemlir-lit`: tilemlir.tools.lit.configure. From a checkout, this
# checkout's tools/ come first on the PATH.

import os
import sys

root = os.path.dirname(os.path.abspath(__file__))
installed = lit_config.params.get("installed", "0") not in ("0", "")
if not installed:
    sys.path.insert(0, root)

import tilemlir  # noqa: E402
from tilemlir.tools.lit import configure  # noqa: E402

from_checkout = os.path.dirname(os.path.dirname(os.path.abspath(tilemlir.__file__))) == root
if installed and from_checkout:
    lit_config.fatal(f"installed=1, but tilemlir is imported from this checkout ({root}); run "
                     f"the lit of the environment tilemlir is installed in, outside `python -m`")
lit_config.note(f"tilemlir {tilemlir.__version__} from {os.path.dirname(tilemlir.__file__)}")

# The suite is rooted here; only test/ holds lit tests (its python/ folder is pytest's).
configure(config, lit_config, name="tilemlir", source_root=root,
          exec_root=os.path.join(root, "test", "Output"),
          tool_dirs=() if installed else (os.path.join(root, "tools"),))
# --param require_ptxas=1 (CI): the tests that assemble PTX must run, so a missing ptxas fails.
if lit_config.params.get("require_ptxas", "0") not in ("0", "") and \
        "ptxas" not in config.available_features:
    lit_config.fatal("require_ptxas=1, but ptxas was not found (pip install 'tilemlir[tools]' "
                     "brings it, or set TILEMLIR_PTXAS)")
config.excludes = ["python", "Output", "Inputs", "examples", "tilemlir", "tools", "dialects",
                   "bench", "docs", "results", "build", ".venv", ".devbundle", ".git"]
if not installed:
    config.environment["PYTHONPATH"] = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])

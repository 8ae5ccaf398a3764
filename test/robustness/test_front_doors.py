"""Front doors and helpers (issue 24): every argument is checked and named, no internal error
reaches the caller, helpers that need torch or a GPU say so, outputs that must not be written
are not, and no DLPack object can crash the process. Each case runs in a child process (the
runner's), with torch installed but no GPU; "without torch" cases hide it for their duration."""

import pytest

from harness import PyCase

GEMM = "from tilemlir.kernels.gemm import hgemm, tuned_hgemm, candidate_configs, choose_config\n"
FUSED = "from tilemlir.kernels.gemm_epilogue import hgemm_fused\n"
MMA = "from tilemlir.kernels.gemm_mma_sync import gemm_mma_sync\n"
NORMS = "from tilemlir.kernels.norms import rms_norm, softmax\n"
TUNE = ("from tilemlir.kernels.hgemm_hopper import hgemm_v5\n"
        "ok = lambda kernel, args: 1.0\n")


def without_torch(code: str) -> str:
    """`code` with `import torch` failing as on an install without torch."""
    body = "\n".join("    " + line for line in code.splitlines())
    return ("import sys\nsaved = sys.modules.get('torch')\nsys.modules['torch'] = None\n"
            f"try:\n{body}\nfinally:\n    sys.modules.pop('torch')\n"
            "    if saved is not None:\n        sys.modules['torch'] = saved\n")


def with_env(name: str, value: str, code: str) -> str:
    body = "\n".join("    " + line for line in code.splitlines())
    return (f"import os\nsaved = os.environ.get({name!r})\nos.environ[{name!r}] = {value!r}\n"
            f"try:\n{body}\nfinally:\n    os.environ.pop({name!r})\n"
            f"    if saved is not None:\n        os.environ[{name!r}] = saved\n")


CASES = []


def case(name, code, exception, *words):
    CASES.append(PyCase(name, code, exception, words))


# ---------------------------------------------------------------- hgemm
for dim, args in (("M", "2**40, 1024, 1024"), ("N", "1024, 2**40, 1024"), ("K", "1024, 1024, 2**40"),
                  ("M", "2**31, 1024, 1024")):
    case(f"hgemm-{dim}-{args.split(',')[['M', 'N', 'K'].index(dim)].strip()}", GEMM + f"hgemm({args})",
         "ShapeError", f"hgemm: {dim}=", "exceeds 2147483647, the largest extent the kernels address")
for k in (1, 32, 63):
    case(f"hgemm-K-{k}-works", GEMM + f"assert hgemm(1024, 1024, {k}, target='sm_90a').kernel.ptx",
         None)
case("hgemm-K-32-sm80", GEMM + "hgemm(1024, 1024, 32, target='sm_80')", "ShapeError",
     "hgemm on sm_80: K=32 must be a multiple of 64 (its kernel's smallest tile)")
for i, value in enumerate(("0", "-1", "1.5", "True", "'1024'", "None")):
    case(f"hgemm-M-bad-{i}", GEMM + f"hgemm({value}, 1024, 1024)", "ShapeError",
         f"hgemm: M must be a positive integer, got {eval(value)!r}")
for dtype in ("float32", "fp16", "int8"):
    case(f"hgemm-dtype-{dtype}", GEMM + f"hgemm(1024, 1024, 1024, {dtype!r})", "ShapeError",
         f"hgemm: dtype must be 'float16' or 'bfloat16', got '{dtype}'")
case("hgemm-numpy-extents", GEMM + "import numpy as np\n"
     "g = hgemm(np.int64(300), np.int32(264), np.int64(40), target='sm_90a')\n"
     "assert g.shape == (300, 264, 40) and all(type(v) is int for v in g.shape)", None)
case("hgemm-numpy-bool", GEMM + "import numpy as np\nhgemm(np.bool_(True), 64, 64, target='sm_90a')",
     "ShapeError", "hgemm: M must be a positive integer, got np.True_")
case("hgemm-bool-after-its-int", GEMM + "hgemm(1, 64, 64, target='sm_90a')\n"
     "hgemm(True, 64, 64, target='sm_90a')", "ShapeError",
     "hgemm: M must be a positive integer, got True")
case("softmax-numpy-n", NORMS + "import numpy as np\nsoftmax(np.int64(7), np.int64(1000))", None)
case("hgemm-call-numpy", GEMM + "import numpy as np\n"
     "hgemm(64, 64, 64, target='sm_90a')(np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16))",
     "ArgumentError", "hgemm: a must be a torch CUDA tensor, got ndarray")
case("hgemm-call-cpu-tensor", GEMM + "import torch\n"
     "hgemm(64, 64, 64, target='sm_90a')(torch.zeros(64, 64, dtype=torch.float16), None)",
     "ArgumentError", "hgemm: a must be a torch CUDA tensor, got Tensor on cpu")
case("hgemm-sm75", GEMM + "hgemm(1024, 1024, 1024, target='sm_75')", "TargetError",
     "hgemm has no kernel for sm_75: it runs on sm_80 and newer")
case("hgemm-sm42", GEMM + "hgemm(1024, 1024, 1024, target='sm_42')", "TargetError",
     "unsupported chip 'sm_42'")
case("hgemm-target-int", GEMM + "hgemm(1024, 1024, 1024, target=90)", "TargetError",
     "a target is a chip name such as 'sm_90a', got 90 (int)")
case("hgemm-config-string", GEMM + "hgemm(1024, 1024, 1024, config='fast', target='sm_90a')",
     "ShapeError", "hgemm: config must be a dict of gemm_kernel's keyword arguments")
case("hgemm-config-hopper-on-sm80", GEMM + "hgemm(1024, 1024, 1024, config={'KERNEL': 'hgemm_v6'}, "
     "target='sm_80')", "TargetError", "hgemm: config's KERNEL hgemm_v6 does not run on sm_80")
case("hgemm-config-blackwell-on-sm90a", GEMM + "hgemm(1024, 1024, 1024, config={'KERNEL': "
     "'blackwell_v6'}, target='sm_90a')", "TargetError", "KERNEL blackwell_v6 does not run on sm_90a")
case("hgemm-config-unknown-parameter", GEMM + "hgemm(1024, 1024, 1024, config={'BOGUS': 1}, "
     "target='sm_90a')", "ShapeError", "hgemm: config {'BOGUS': 1} does not fit hgemm_v6")
case("hgemm-config-unknown-kernel", GEMM + "hgemm(1024, 1024, 1024, config={'KERNEL': 'v10'}, "
     "target='sm_90a')", "ShapeError", "hgemm: KERNEL must be one of hgemm_v6")
case("hgemm-sm100a-ragged-M", GEMM + "hgemm(1000, 1024, 1024, target='sm_100a')", "ShapeError",
     "hgemm on sm_100a: M=1000 must be a multiple of 128")
case("hgemm-sm100a-ragged-N", GEMM + "hgemm(1024, 1000, 1024, target='sm_100a')", "ShapeError",
     "hgemm on sm_100a: N=1000 must be a multiple of 16")
case("hgemm-sm80-ragged-M", GEMM + "hgemm(1000, 1024, 1024, target='sm_80')", "ShapeError",
     "hgemm on sm_80: M=1000 must be a multiple of 64")
case("hgemm-sm80-ragged-K", GEMM + "hgemm(1024, 1024, 1000, target='sm_80')", "ShapeError",
     "hgemm on sm_80: K=1000 must be a multiple of 64")
for chip, kernels in (("sm_80", ("gemm_mma_sync",)), ("sm_86", ("gemm_mma_sync",)),
                      ("sm_90", ("gemm_mma_sync",)), ("sm_90a", ("hgemm_v6", "hgemm_v7", "hgemm_v8")),
                      ("sm_100a", ("blackwell_v6",))):
    case(f"hgemm-routes-{chip}", GEMM + f"g = hgemm(1024, 1024, 1024, target={chip!r})\n"
         f"assert g.config['KERNEL'] in {kernels!r}, g.config\n"
         f"assert '.target {chip}' in g.kernel.ptx", None)
case("hgemm-without-torch", without_torch(GEMM + "hgemm(1024, 1024, 1024, target='sm_90a')(None, None)"),
     "TorchUnavailable", "hgemm needs PyTorch, which is not installed here: pip install 'tilemlir[torch]'")
case("tuned-hgemm-without-torch", without_torch(GEMM + "tuned_hgemm(1024, 1024, 1024, target='sm_90a')"),
     "TorchUnavailable", "tuned_hgemm needs PyTorch", "pip install 'tilemlir[torch]'")
case("tuned-hgemm-without-gpu", GEMM + "tuned_hgemm(1024, 1024, 1024, target='sm_90a')",
     "CudaUnavailable", "tuned_hgemm runs on a CUDA GPU, and torch sees none here")
case("tuned-hgemm-sm80", GEMM + "tuned_hgemm(1024, 1024, 1024, target='sm_80')", "TargetError",
     "tuned_hgemm tunes the sm_90a kernels; on sm_80 use hgemm")
for i, args in enumerate(("0, 1024, 1024", "-1, 1024, 1024", "1024.5, 1024, 1024", "1024, 0, 1024",
                          "1024, 1024, 0.5")):
    case(f"candidate-configs-bad-{i}", GEMM + f"candidate_configs({args})", "ShapeError",
         "candidate_configs: ", "must be a positive integer")
case("candidate-configs-K-32-works", GEMM + "assert candidate_configs(1024, 1024, 32)", None)
case("candidate-configs-sms-0", GEMM + "candidate_configs(1024, 1024, 1024, sms=0)", "ShapeError",
     "candidate_configs: sms must be an integer of at least 2")
case("choose-config-sm75", GEMM + "choose_config(1024, 1024, 1024, target='sm_75')", "TargetError",
     "hgemm has no kernel for sm_75")

# ---------------------------------------------------------------- hgemm_fused
case("fused-M-2**40", FUSED + "hgemm_fused(2**40, 1024, 1024)", "ShapeError",
     "hgemm_fused: M=1099511627776 exceeds 2147483647")
case("fused-K-36-works", FUSED + "assert hgemm_fused(1024, 1024, 36)", None)
case("fused-N-0", FUSED + "hgemm_fused(1024, 0, 1024)", "ShapeError",
     "hgemm_fused: N must be a positive integer, got 0")
for value in ("nan", "inf", "-inf"):
    case(f"fused-alpha-{value}", FUSED + f"hgemm_fused(1024, 1024, 1024, alpha=float({value!r}))",
         "ShapeError", f"hgemm_fused: alpha must be a finite number, got {value}")
case("fused-alpha-string", FUSED + "hgemm_fused(1024, 1024, 1024, alpha='1')", "ShapeError",
     "hgemm_fused: alpha must be a finite number, got '1'")
for name, value in (("BM", "True"), ("SMS", "0"), ("STAGES", "-1"), ("EPI_N", "64.0")):
    case(f"fused-{name}-{value}", FUSED + f"hgemm_fused(1024, 1024, 1024, {name}={value})",
         "ShapeError", f"hgemm_fused: {name} must be a positive integer, got {value}")
case("fused-activation", FUSED + "hgemm_fused(1024, 1024, 1024, activation='tanh')", "ShapeError",
     "hgemm_fused: activation must be one of")
case("fused-bias-string", FUSED + "hgemm_fused(1024, 1024, 1024, bias='yes')", "ShapeError",
     "hgemm_fused: bias must be True or False, got 'yes'")

# ---------------------------------------------------------------- gemm_mma_sync
case("mma-sync-warp-tile-epilogue", MMA + "gemm_mma_sync(512, 512, 256, BM=64, BN=128, WM=32, WN=32)",
     "ShapeError", "gemm_mma_sync: WN=32: the epilogue stages the 64x128 tile in shared memory in "
     "64-column swizzle atoms", "WN must be a multiple of 64 when BN > 64 (or EPILOGUE=0)")
case("mma-sync-warp-tile-direct-epilogue-ok", MMA + "import tilemlir\n"
     "tilemlir.compile(gemm_mma_sync(512, 512, 256, BM=64, BN=128, WM=32, WN=32, EPILOGUE=0), "
     "target='sm_80', cache=False)", None)
case("mma-sync-too-many-warps", MMA + "gemm_mma_sync(512, 512, 256, BM=128, BN=256, WM=16, WN=16)",
     "ShapeError", "gemm_mma_sync: a 128x256 tile of 16x16 warp tiles needs 128 warps; a block has "
     "at most 32")
case("mma-sync-stages-1", MMA + "gemm_mma_sync(512, 512, 256, STAGES=1)", "ShapeError",
     "gemm_mma_sync: STAGES=1 must be at least 2")
case("mma-sync-epilogue-2", MMA + "gemm_mma_sync(512, 512, 256, EPILOGUE=2)", "ShapeError",
     "gemm_mma_sync: EPILOGUE must be 0 or 1, got 2")
case("mma-sync-spread-half", MMA + "gemm_mma_sync(512, 512, 256, SPREAD=0.5)", "ShapeError",
     "gemm_mma_sync: SPREAD must be 0 or 1, got 0.5")
case("mma-sync-dtype", MMA + "gemm_mma_sync(512, 512, 256, 'float32')", "ShapeError",
     "gemm_mma_sync: dtype must be 'float16' or 'bfloat16', got 'float32'")
case("mma-sync-M-float", MMA + "gemm_mma_sync(512.0, 512, 256)", "ShapeError",
     "gemm_mma_sync: M must be a positive integer, got 512.0")
case("mma-sync-WN-zero", MMA + "gemm_mma_sync(512, 512, 256, WN=0)", "ShapeError",
     "gemm_mma_sync: WN must be a positive integer, got 0")

# ---------------------------------------------------------------- norms and attention
for value in ("float('nan')", "float('inf')", "-1.0", "'1e-6'", "None"):
    case(f"rms-norm-eps-{value.strip(chr(39))}", NORMS + f"rms_norm(64, 1024, eps={value})",
         "ValueError", "rms_norm: eps must be a finite number >= 0 (it is compiled into the kernel)")
case("softmax-fast-int", NORMS + "softmax(64, 1024, fast=1)", "ValueError",
     "softmax: fast must be True or False, got 1")
case("softmax-M-0", NORMS + "softmax(0, 1024)", "ValueError", "softmax: M must be a positive integer, got 0")
case("softmax-M-2**40", NORMS + "softmax(2**40, 1024)", "ValueError",
     "softmax: M=1099511627776 rows exceed 2147483647")
case("rms-norm-dtype", NORMS + "rms_norm(64, 1024, 'float64')", "ValueError",
     "rms_norm: dtype must be 'float16', 'bfloat16' or 'float32', got 'float64'")
ATTENTION = "from tilemlir.kernels.attention import attention\n"
case("attention-scale-nan", ATTENTION + "attention(None, None, None, scale=float('nan'))",
     "ArgumentError", "attention: scale=nan must be None (1 / sqrt(head dim)) or a positive finite number")
case("attention-scale-inf", ATTENTION + "attention(None, None, None, scale=float('inf'))",
     "ArgumentError", "attention: scale=inf must be None (1 / sqrt(head dim)) or a positive finite")
case("attention-causal-int", ATTENTION + "attention(None, None, None, is_causal=1)",
     "ArgumentError", "attention: is_causal must be a bool, got int")
case("attention-config-list", ATTENTION + "attention(None, None, None, config=[2])", "ArgumentError",
     "attention: config must be None or a dict of flash_attention's keyword arguments, got [2]")

# ---------------------------------------------------------------- autotune
case("autotune-configs-dict", TUNE + "tilemlir.autotune(hgemm_v5, {'STAGES': 3})", "ArgumentError",
     "autotune(tilemlir.kernels.hgemm_hopper.hgemm_v5): configs must be a list of dicts",
     "one configuration? pass configs=[{...}]")
case("autotune-configs-ints", TUNE + "tilemlir.autotune(hgemm_v5, [3])", "ArgumentError",
     "configs[0] must be a dict of keyword arguments, got 3")
case("autotune-configs-string", TUNE + "tilemlir.autotune(hgemm_v5, 'STAGES=3')", "ArgumentError",
     "configs must be a list of dicts (each the factory's keyword arguments), got a str")
case("autotune-configs-empty", TUNE + "tilemlir.autotune(hgemm_v5, [])", "ValueError",
     "autotune(tilemlir.kernels.hgemm_hopper.hgemm_v5) needs at least one configuration")
case("autotune-factory-not-callable", TUNE + "tilemlir.autotune(3, [{}])", "ArgumentError",
     "autotune: factory must be a kernel factory (a callable such as hgemm_v6), got int")
case("autotune-bench-not-callable", TUNE + "tilemlir.autotune(hgemm_v5, [{}], bench='do_bench')",
     "ArgumentError", "autotune: bench must be a callable bench(kernel, args) -> milliseconds, got str")
for i, result in enumerate(("None", "float('nan')", "'1 ms'", "-1.0", "True")):
    case(f"autotune-bench-returns-{i}", TUNE + f"t = tilemlir.autotune(hgemm_v5, [dict(STAGES=2)], "
         f"target='sm_90a', bench=lambda kernel, args: {result})\nt(256, 256, {256 + 64 * i}, args=(1,))",
         "ArgumentError", f"bench returned {eval(result)!r} for {{'STAGES': 2}}; it must return the "
         f"kernel's time in milliseconds")
case("autotune-args-not-tuple", TUNE + "t = tilemlir.autotune(hgemm_v5, [dict(STAGES=2)], "
     "target='sm_90a', bench=ok)\nt(256, 256, 640, args='abc')", "ArgumentError",
     "args must be a tuple of the kernel's arguments, got str")
case("autotune-partial-factory", TUNE + "import functools\n"
     "t = tilemlir.autotune(functools.partial(hgemm_v5, 256, 256), [dict(STAGES=2)], "
     "target='sm_90a', bench=ok)\nassert t(256, 'float16', args=(1,)).name == 'hgemm_v5'\n"
     "u = tilemlir.autotune(functools.partial(hgemm_v5, 512, 256), [dict(STAGES=2)], "
     "target='sm_90a', bench=lambda kernel, args: 1 / 0)\n"
     "try:\n    u(256, 'float16', args=(1,))\nexcept ZeroDivisionError:\n    pass\n"
     "else:\n    raise AssertionError('the partials shared a key')", None)
case("autotune-unreadable-results-file", TUNE + "import json, warnings\n"
     "from tilemlir.runtime.compiler import cache_root, CacheWarning\n"
     "store = cache_root() / 'autotune' / 'tilemlir.kernels.hgemm_hopper.hgemm_v5.json'\n"
     "store.parent.mkdir(parents=True, exist_ok=True)\nstore.write_text('[]')\n"
     "t = tilemlir.autotune(hgemm_v5, [dict(STAGES=2)], target='sm_90a', bench=ok)\n"
     "with warnings.catch_warnings(record=True) as seen:\n    warnings.simplefilter('always')\n"
     "    t(256, 256, 768, args=(1,))\n"
     "assert any(issubclass(w.category, CacheWarning) and 'ignoring the results file' in "
     "str(w.message) and 'it holds a JSON list' in str(w.message) for w in seen), seen\n"
     "assert isinstance(json.loads(store.read_text()), dict)", None)
case("autotune-garbage-results-file", TUNE + "import warnings\n"
     "from tilemlir.runtime.compiler import cache_root\n"
     "store = cache_root() / 'autotune' / 'tilemlir.kernels.hgemm_hopper.hgemm_v5.json'\n"
     "store.parent.mkdir(parents=True, exist_ok=True)\nstore.write_bytes(b'\\xff{')\n"
     "t = tilemlir.autotune(hgemm_v5, [dict(STAGES=2)], target='sm_90a', bench=ok)\n"
     "with warnings.catch_warnings(record=True) as seen:\n    warnings.simplefilter('always')\n"
     "    t(256, 256, 832, args=(1,))\nassert any('ignoring the results file' in str(w.message) "
     "for w in seen), seen", None)
case("autotune-default-bench-without-gpu", TUNE + "tilemlir.autotune(hgemm_v5, [dict(STAGES=2)], "
     "target='sm_90a')(256, 256, 896, args=(1,))", "CudaUnavailable",
     "autotune(tilemlir.kernels.hgemm_hopper.hgemm_v5) with its default bench (do_bench) runs on a CUDA GPU")
case("autotune-without-torch", without_torch(TUNE + "tilemlir.autotune(hgemm_v5, [dict(STAGES=2)], "
     "target='sm_90a')(256, 256, 960, args=(1,))"), "TorchUnavailable",
     "needs PyTorch, which is not installed here: pip install 'tilemlir[torch]'")

# ---------------------------------------------------------------- do_bench, torch_op
BENCH = "from tilemlir.testing import do_bench\n"
case("do-bench-without-gpu", BENCH + "do_bench(lambda: None)", "CudaUnavailable",
     "do_bench runs on a CUDA GPU, and torch sees none here")
case("do-bench-without-torch", without_torch(BENCH + "do_bench(lambda: None)"), "TorchUnavailable",
     "do_bench needs PyTorch, which is not installed here: pip install 'tilemlir[torch]'")
case("torch-op-without-torch", without_torch("tilemlir.torch_op(None, 'a::b', 'D')"),
     "TorchUnavailable", "tilemlir.torch_op needs PyTorch")

# ---------------------------------------------------------------- environment flags
DEMO = "from tilemlir.kernels.mma_demo import gemm_16x8x16 as k\n"
for name in ("TILEMLIR_COMPILE_IN_PROCESS", "TILEMLIR_DEBUG"):
    for value in ("maybe", "2", "on", "TRUE1"):
        case(f"env-{name.lower()}-{value}", with_env(name, value, DEMO +
             "tilemlir.compile(k, target='sm_80', cache=False)"), "SettingError",
             f"{name} must be 1, true or yes (on) or 0, false or no (off; or unset), got '{value}'")
for value, on in (("1", True), ("TRUE", True), ("Yes", True), ("0", False), ("false", False),
                  ("NO", False), ("", False), (" true ", True)):
    case(f"env-flag-{value.strip() or 'empty'}-{int(on)}", with_env("TILEMLIR_COMPILE_IN_PROCESS", value,
         "from tilemlir.env import flag\n"
         f"assert flag('TILEMLIR_COMPILE_IN_PROCESS') is {on}\n" + DEMO +
         "tilemlir.compile(k, target='sm_80', cache=False)"), None)

# ---------------------------------------------------------------- outputs and DLPack
KERNEL = ("from pathlib import Path\nfrom tilemlir.runtime import Executable\n"
          "import harness\n"
          "text = (harness.REPO / 'examples' / 'mma_demo.mlir').read_text()\n"
          "kernel = tilemlir.compile(text, target='sm_90a')\n")
FAKE_DEVICE = (KERNEL + "import numpy as np\nfrom tilemlir.runtime import launch\n"
               "memory = {}\n"
               "def to_device(a):\n    memory[len(memory) + 1] = a.tobytes()\n    return len(memory)\n"
               "def back(a, address):\n    a[...] = np.frombuffer(memory[address], a.dtype).reshape(a.shape)\n"
               "def run(self, grid, stream, addresses, scalars, device, *rest):\n"
               "    memory[addresses[2]] = np.ones((16, 8), np.float32).tobytes()\n"
               "launch.copy_to_device, launch.copy_back_and_free = to_device, back\n"
               "launch.bound_device = lambda: 0\n"
               "type(kernel)._launch = run\n")
case("output-over-immutable-bytes", FAKE_DEVICE +
     "d = np.frombuffer(bytes(16 * 8 * 4), np.float32).reshape(16, 8)\n"
     "kernel(np.zeros((16, 16), np.float16), np.zeros((16, 8), np.float16), d)", "ArgumentError",
     "gemm_16x8x16 wrote argument 'arg2', a read-only array (its flags.writeable is False), which "
     "was left unchanged")
case("output-flagged-read-only", FAKE_DEVICE + "d = np.zeros((16, 8), np.float32)\n"
     "d.flags.writeable = False\n"
     "kernel(np.zeros((16, 16), np.float16), np.zeros((16, 8), np.float16), d)", "ArgumentError",
     "wrote argument 'arg2', a read-only array")
case("read-only-inputs-accepted", FAKE_DEVICE +
     "a = np.frombuffer(bytes(16 * 16 * 2), np.float16).reshape(16, 16)\n"
     "d = np.zeros((16, 8), np.float32)\nkernel(a, np.zeros((16, 8), np.float16), d)\n"
     "assert d.all() and not a.any()", None)
HOSTILE = (KERNEL + "import ctypes, struct\n"
           "new = ctypes.pythonapi.PyCapsule_New\nnew.restype = ctypes.py_object\n"
           "new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]\n"
           "NAME = ctypes.c_char_p(b'dltensor')\nkeep = []\n"
           "def tensor(ndim, shape, strides=0):\n"
           "    b = ctypes.create_string_buffer(struct.pack('<QiiiBBHQQQQQ', 4096, 2, 0, ndim, 2, "
           "16, 1, shape, strides, 0, 0, 0))\n    keep.append(b)\n    return ctypes.addressof(b)\n"
           "class Hostile:\n    def __init__(self, capsule):\n        self.capsule = capsule\n"
           "    def __dlpack__(self, stream=None, **kwargs):\n        return self.capsule\n"
           "    def __dlpack_device__(self):\n        return (2, 0)\n"
           "shape = (ctypes.c_int64 * 2)(16, 16)\n")
for name, capsule, words in (
        ("low-address", "new(0x10, NAME, None)", "its DLPack capsule points at unreadable memory"),
        ("kernel-address", "new(0xffffffffff600000, NAME, None)",
         "its DLPack capsule points at unreadable memory"),
        ("bad-shape", "new(tensor(2, 0x8), NAME, None)", "its DLPack tensor's shape points at unreadable memory"),
        ("bad-strides", "new(tensor(2, ctypes.addressof(shape), 0x18), NAME, None)",
         "its DLPack tensor's strides points at unreadable memory"),
        ("huge-ndim", "new(tensor(1 << 30, ctypes.addressof(shape)), NAME, None)",
         "its DLPack tensor has 1073741824 dimensions"),
        ("negative-ndim", "new(tensor(-5, ctypes.addressof(shape)), NAME, None)",
         "its DLPack tensor has -5 dimensions"),
        ("used-capsule", "new(tensor(2, ctypes.addressof(shape)), ctypes.c_char_p(b'used_dltensor'), None)",
         "its __dlpack__() returned PyCapsule, not an unused DLPack capsule"),
        ("not-a-capsule", "42", "its __dlpack__() returned int, not an unused DLPack capsule")):
    case(f"dlpack-{name}", HOSTILE + f"h = Hostile({capsule})\nkernel(h, h, h)", "ArgumentError",
         f"argument 'arg0' must be a CUDA tensor: {words}")
case("dlpack-raises", HOSTILE + "class Raises(Hostile):\n"
     "    def __dlpack__(self, stream=None, **kwargs):\n        raise MemoryError('no')\n"
     "h = Raises(None)\nkernel(h, h, h)", "ArgumentError",
     "argument 'arg0' must be a CUDA tensor: its __dlpack__() raised MemoryError: no")


MATMUL = ("import torch\nfrom tilemlir.kernels.gemm import matmul_nt\n"
          "a = torch.zeros(8, 16, dtype=torch.float16)\nb = torch.zeros(4, 16, dtype=torch.float16)\n")
for name, call, words in (
        ("a-not-tensor", "matmul_nt([[1.0]], b)", "matmul_nt: a must be a torch tensor, got list"),
        ("b-1d", "matmul_nt(a, b[0])", "matmul_nt: b must be 2-D, got shape [16]"),
        ("a-float32", "matmul_nt(a.float(), b)", "matmul_nt: a has dtype torch.float32; float16 or bfloat16 needed"),
        ("b-bfloat16", "matmul_nt(a, b.bfloat16())", "matmul_nt: b is torch.bfloat16 but a is torch.float16"),
        ("k-mismatch", "matmul_nt(a, b[:, :8])", "matmul_nt: b [4, 8] must be N x K with a's K=16 (a is [8, 16])"),
        ("out-shape", "matmul_nt(a, b, torch.zeros(4, 8, dtype=torch.float16))",
         "matmul_nt: out must be a 8 x 4 torch.float16 tensor, got [4, 8] torch.float16"),
        ("cpu", "matmul_nt(a, b)", "matmul_nt: a must be a CUDA tensor on a's device (cpu), got one on cpu")):
    case(f"matmul-nt-{name}", MATMUL + call, "ArgumentError", words)


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case(batch, case_id):
    batch.check(case_id)

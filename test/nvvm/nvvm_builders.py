#!/usr/bin/env python
"""Regression checks of the upstream NVVM Python builders, behind docs/notes/nvvm-builders.md.

Every check builds a tiny ``gpu.module`` kernel with the MLIR 22 Python builders
(``from mlir.dialects import nvvm, llvm, arith, ...``), lowers it with
``gpu-lower-to-nvvm-pipeline{cubin-chip=CHIP cubin-features=+ptxNN cubin-format=isa
kernel-bare-ptr-calling-convention=true}``, takes the PTX text out of the
``gpu.binary`` and assembles it with ``ptxas -arch=CHIP``.

The LLVM inside the wheels is built with assertions: a wrong nvvm op for a chip
kills the process (``LLVM ERROR: Cannot select ...``).  So every build runs in a
child process (this same file, ``--child``); the parent only looks at the exit
status, the PTX text and ptxas.

Usage (pytest runs every check as one test, in parallel: test_nvvm_builders.py)::

    python -m pytest test/nvvm                      # every check (marker nvvm_builders)
    python -m pytest test/nvvm -k wgmma
    python test/nvvm/nvvm_builders.py               # the same checks, one line each
    python test/nvvm/nvvm_builders.py wgmma tcgen05_mma
    python test/nvvm/nvvm_builders.py --list
    python test/nvvm/nvvm_builders.py -v mma_sync   # also print matched PTX lines
    python test/nvvm/nvvm_builders.py --ptx mma_sync f16_m16n8k16 sm_80 +ptx70

Each line of output is ``OK`` or ``FAIL``, the item/variant, the chip and PTX
version, and what happened.  A check can *expect* a failure: ``expect="abort"``
(the child process dies: LLVM ERROR / assertion), ``"error"`` (a Python-level
MLIRError, e.g. the verifier), ``"ptxas"`` (lowers, but ptxas rejects the PTX);
``why`` is a regex the message must match.  Such a check is OK when it fails that
way and FAIL when it does not.  The exit status is the number of FAILs (0 = all
as recorded in the notes).

One item runs on hardware: ``wgmma_hw`` computes a 64x64x64 f16 GEMM with
wgmma from hand-swizzled shared memory, descriptors from
tilemlir/lowering/cuda/descriptors.py and the +32-byte K step::

    python test/nvvm/nvvm_builders.py --hw-emit build/hw   # here (MLIR)
    python test/nvvm/nvvm_builders.py --hw-run build/hw    # on an sm_90 GPU (cupy, ptxas)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

# --------------------------------------------------------------------------------------
# The kernel skeleton and the child side
# --------------------------------------------------------------------------------------

SMEM_BYTES = 32 * 1024  # static shared memory is capped at 48 KiB


class Kernel:
    """What an item body gets: a global pointer ``g``, 32 KiB of static shared memory
    (``smem``: an ``!llvm.ptr<3>``; ``smem_generic``: the same as a generic pointer)
    and a few helpers.  Values that must not be optimised away go through ``sink``;
    values that must not be constant-folded come from ``opaque``."""

    def __init__(self, ir, g, smem):
        from mlir.dialects import arith, llvm  # noqa: F401

        self.ir = ir
        self.g = g
        self.smem = smem
        self.i1 = ir.IntegerType.get_signless(1)
        self.i8 = ir.IntegerType.get_signless(8)
        self.i16 = ir.IntegerType.get_signless(16)
        self.i32 = ir.IntegerType.get_signless(32)
        self.i64 = ir.IntegerType.get_signless(64)
        self.f16 = ir.F16Type.get()
        self.bf16 = ir.BF16Type.get()
        self.f32 = ir.F32Type.get()
        self.ptr = _llvm().PointerType.get()  # generic
        self.ptr1 = _llvm().PointerType.get(1)  # global
        self.ptr3 = _llvm().PointerType.get(3)  # shared::cta
        self.ptr6 = _llvm().PointerType.get(6)  # tensor memory
        self.smem_generic = _llvm().addrspacecast(self.ptr, smem)

    # helpers ---------------------------------------------------------------------
    def const(self, ty, v):
        from mlir.dialects import arith

        return arith.constant(ty, v)

    def opaque(self, ty, offset=0):
        """A runtime value of type ``ty`` (a load from the global pointer)."""
        from mlir.dialects import llvm

        p = self.g
        if offset:
            p = llvm.getelementptr(self.ptr, self.g, [], [offset], self.i8, 0)
        return llvm.load(ty, p)

    def sink(self, v, offset=0):
        from mlir.dialects import llvm

        p = self.g
        if offset:
            p = llvm.getelementptr(self.ptr, self.g, [], [offset], self.i8, 0)
        llvm.store(v, p)

    def smem_at(self, byte_offset, generic=False):
        from mlir.dialects import llvm

        base = self.smem_generic if generic else self.smem
        if byte_offset == 0:
            return base
        return llvm.getelementptr(self.ptr if generic else self.ptr3, base, [], [byte_offset], self.i8, 0)

    def struct(self, tys):
        return _llvm().StructType.get_literal(list(tys))

    def elems(self, struct_value, ty, n):
        from mlir.dialects import llvm

        return [llvm.extractvalue(ty, struct_value, [i]) for i in range(n)]


def _llvm():
    from mlir.dialects import llvm

    return llvm


def build_and_lower(item: str, variant: str, chip: str, ptx: str) -> str:
    """Build ITEMS[item] variant for chip, lower it, return the PTX text (child side)."""
    from mlir import ir, passmanager
    from mlir.dialects import gpu, llvm

    spec = ITEMS[item]
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        module.operation.attributes["gpu.container_module"] = ir.UnitAttr.get()
        with ir.InsertionPoint(module.body):
            gm = gpu.GPUModuleOp("kernels")
            gm.bodyRegion.blocks.append()
            with ir.InsertionPoint(gm.bodyRegion.blocks[0]):
                # 32 KiB of static shared memory, 1024-byte aligned (128B-swizzle atoms).
                llvm.mlir_global(
                    ir.Type.parse(f"!llvm.array<{SMEM_BYTES} x i8>"),
                    "smem",
                    ir.Attribute.parse("#llvm.linkage<internal>"),
                    addr_space=3,
                    alignment=1024,
                )
                ptr = llvm.PointerType.get()
                fn = gpu.GPUFuncOp(ir.FunctionType.get([ptr], []), sym_name="kern", kernel=True)
                block = fn.add_entry_block()
                with ir.InsertionPoint(block):
                    smem = llvm.mlir_addressof(llvm.PointerType.get(3), "smem")
                    k = Kernel(ir, block.arguments[0], smem)
                    spec.body(k, variant, chip)
                    gpu.ReturnOp([])
        if os.environ.get("NVVM_CHECKS_DUMP_IR"):
            print(module, file=sys.stderr)
        feats = "" if ptx == "-" else f"cubin-features={ptx} "
        pipeline = (
            "builtin.module(gpu-lower-to-nvvm-pipeline{"
            f"cubin-chip={chip} {feats}cubin-format=isa "
            "kernel-bare-ptr-calling-convention=true})"
        )
        pm = passmanager.PassManager.parse(pipeline)
        pm.run(module.operation)
        for op in module.body.operations:
            if op.operation.name == "gpu.binary":
                for attr in op.attributes["objects"]:
                    return gpu.ObjectAttr(attr).object.decode()
    raise RuntimeError("no gpu.binary after lowering")


def child_main(item: str, variant: str, chip: str, ptx: str) -> int:
    try:
        text = build_and_lower(item, variant, chip, ptx)
    except Exception as e:  # a Python-level failure (verifier, bad builder call)
        msg = str(e).strip().splitlines()
        print("PYERROR: " + type(e).__name__ + ": " + " | ".join(m.strip() for m in msg[:6]), file=sys.stderr)
        return 3
    sys.stdout.write(text)
    return 0


# --------------------------------------------------------------------------------------
# Check descriptions and the parent side
# --------------------------------------------------------------------------------------


@dataclass
class Check:
    variant: str
    chip: str
    ptx: str
    expect: str = "ok"  # "ok" | "abort" | "error" | "ptxas" (lowers, but ptxas rejects the PTX)
    patterns: Sequence[str] = ()  # regexes that must match lines of the PTX (expect="ok")
    absent: Sequence[str] = ()  # regexes that must NOT match (expect="ok")
    why: str = ""  # regex the abort/error message must match (expect != "ok")
    note: str = ""


@dataclass
class Item:
    name: str
    body: Callable  # body(k: Kernel, variant: str, chip: str)
    checks: List[Check] = field(default_factory=list)
    doc: str = ""


ITEMS: Dict[str, Item] = {}


def item(name: str, checks: List[Check], doc: str = ""):
    def deco(fn):
        ITEMS[name] = Item(name, fn, checks, doc or (fn.__doc__ or "").strip().splitlines()[0])
        return fn

    return deco


def _ptxas() -> Optional[str]:
    from tilemlir.target.ptx import find_ptxas  # PATH, CUDA_HOME or the nvidia-cuda-nvcc wheel

    return find_ptxas()


def run_check(it: Item, c: Check, verbose: bool = False, timeout: int = 300):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", it.name, c.variant, c.chip, c.ptx]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    err = p.stderr.strip()
    if p.returncode == 0:
        outcome = "ok"
    elif p.returncode == 3 and "PYERROR:" in err:
        outcome = "error"
    else:
        outcome = "abort"
    why = ""
    for line in err.splitlines():
        if line.startswith(("LLVM ERROR", "PYERROR", "python:")) or "Assertion" in line or "error:" in line:
            why = line.strip()
            break
    if not why and err:
        why = err.splitlines()[-1].strip()
    label = f"{it.name}/{c.variant}"
    where = f"{c.chip} {c.ptx}"
    if outcome != c.expect and not (outcome == "ok" and c.expect == "ptxas"):
        detail = why or "(no message)"
        if outcome == "ok":
            detail = "lowered and produced PTX, but the notes expect " + c.expect
        return False, f"FAIL {label:40s} {where:18s} expected {c.expect}, got {outcome}: {detail[:300]}"
    if outcome != "ok":
        if c.why and not re.search(c.why, err):
            return False, f"FAIL {label:40s} {where:18s} {outcome}s, but not with /{c.why}/: {why[:200]}"
        return True, f"OK   {label:40s} {where:18s} {outcome}s as expected: {why[:200]}"
    ptx_text = p.stdout
    problems = []
    shown = []
    lines = ptx_text.splitlines()
    for pat in c.patterns:
        rx = re.compile(pat)
        hit = next((ln.strip() for ln in lines if rx.search(ln)), None)
        if hit is None:
            problems.append(f"no line matches /{pat}/")
        else:
            shown.append(hit)
    for pat in c.absent:
        rx = re.compile(pat)
        hit = next((ln.strip() for ln in lines if rx.search(ln)), None)
        if hit is not None:
            problems.append(f"unexpected line /{pat}/: {hit}")
    ptxas = _ptxas()
    if ptxas is None:
        problems.append("no ptxas (PATH, CUDA_HOME or the nvidia-cuda-nvcc wheel)")
    else:
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "k.ptx")
            with open(src, "w") as f:
                f.write(ptx_text)
            q = subprocess.run(
                [ptxas, f"-arch={c.chip}", src, "-o", os.path.join(d, "k.cubin")],
                capture_output=True,
                text=True,
            )
            ptxas_msg = " | ".join(q.stderr.strip().splitlines()[:3])
            if c.expect == "ptxas":
                if q.returncode == 0:
                    problems.append("ptxas accepted the PTX, but the notes expect a rejection")
                elif c.why and not re.search(c.why, q.stderr):
                    problems.append(f"ptxas rejected it, but not with /{c.why}/: {ptxas_msg}")
                else:
                    shown.insert(0, "ptxas rejects as expected: " + ptxas_msg)
            elif q.returncode != 0:
                problems.append("ptxas: " + ptxas_msg)
    if problems:
        return False, f"FAIL {label:40s} {where:18s} " + "; ".join(problems)
    first = shown[0] if shown else ""
    if c.expect == "ptxas":
        return True, f"OK   {label:40s} {where:18s} {first[:200]}"
    msg = f"OK   {label:40s} {where:18s} ptxas ok  {first[:110]}"
    if verbose and len(shown) > 1:
        msg += "".join("\n" + " " * 10 + s for s in shown[1:])
    return True, msg


_started: Dict[int, Future] = {}
_pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 1)


def prefetch(checks: Sequence[tuple]) -> None:
    """Starts run_check for every (item, check), one child process per CPU at a time, so that
    outcome() later finds them done: each check is one process, waiting on LLVM."""
    for it, c in checks:
        _started[id(c)] = _pool.submit(run_check, it, c)


def cancel_prefetch() -> None:
    """Drops the checks prefetch() has not started (a test session that stops early)."""
    _pool.shutdown(wait=False, cancel_futures=True)


def outcome(it: Item, c: Check):
    """run_check's (ok, message) for `c`, from prefetch() when it started it."""
    started = _started.pop(id(c), None)
    return started.result() if started is not None else run_check(it, c)


# --------------------------------------------------------------------------------------
# Items
# --------------------------------------------------------------------------------------

SM80, SM90A, SM100A = "sm_80", "sm_90a", "sm_100a"
P70, P78, P80, P86, P87, P88 = "+ptx70", "+ptx78", "+ptx80", "+ptx86", "+ptx87", "+ptx88"
ALL_CHIPS = [(SM80, P78), (SM90A, P80), (SM100A, P86)]

# ---- mma.sync ----------------------------------------------------------------------------


def _mma_checks():
    out = []
    pats = {
        "f16_m16n8k16": r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32",
        "f16_m16n8k8": r"mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.f16\.f16\.f32",
        "bf16_m16n8k16": r"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.bf16\.bf16\.f32",
        "bf16_m16n8k8": r"mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.bf16\.bf16\.f32",
    }
    for v, pat in pats.items():
        for chip, ptx in [(SM80, P70), (SM90A, P80), (SM100A, P86)]:
            out.append(Check(v, chip, ptx, patterns=[pat]))
    # operand packing is checked by the verifier (at pass-manager run time, not at build time)
    out.append(Check("f16_m16n8k16_i32operands", SM80, P70, expect="error", why="expected one of 4xvector<2xf16>"))
    out.append(Check("bf16_m16n8k16_v2bf16", SM80, P70, expect="error", why="expected one of 4xi32"))
    # without multiplicand_{a,b}_ptx_type: an assertion (std::optional) kills the process
    out.append(Check("f16_m16n8k16_no_ptx_types", SM80, P70, expect="abort", why="MMATypes"))
    # PTX version below the chip's minimum: LLVM ERROR
    out.append(Check("f16_m16n8k16", SM80, "+ptx60", expect="abort", why="Minimum required PTX version is 7.0"))
    # cubin-features left out: the pipeline asks for +ptx60, which no chip here accepts
    out.append(Check("f16_m16n8k16", SM80, "-", expect="abort", why="PTX version 6.0 does not support"))
    return out


@item("mma_sync", _mma_checks(), "nvvm.mma_sync m16n8k16 / m16n8k8, f16 and bf16 inputs, f32 accumulate")
def mma_sync(k: Kernel, variant: str, chip: str):
    from mlir import ir
    from mlir.dialects import llvm, nvvm

    kind, shape = variant.split("_")[0], variant.split("_")[1]
    kk = 16 if shape.endswith("k16") else 8
    v2f16 = ir.VectorType.get([2], k.f16)
    if kind == "f16":
        a_ty = k.i32 if "i32operands" in variant else v2f16
        ptx_t = nvvm.MMATypes.f16
    else:
        a_ty = ir.VectorType.get([2], k.bf16) if "v2bf16" in variant else k.i32
        ptx_t = nvvm.MMATypes.bf16
    n_a, n_b = (4, 2) if kk == 16 else (2, 1)
    a = [k.opaque(a_ty, 4 * i) for i in range(n_a)]
    b = [k.opaque(a_ty, 16 + 4 * i) for i in range(n_b)]
    c = [k.opaque(k.f32, 32 + 4 * i) for i in range(4)]
    res_ty = k.struct([k.f32] * 4)
    shape_attr = ir.Attribute.parse(f"#nvvm.shape<m = 16, n = 8, k = {kk}>")
    kw = {}
    if "no_ptx_types" not in variant:
        kw = dict(multiplicand_a_ptx_type=ptx_t, multiplicand_b_ptx_type=ptx_t)
    d = nvvm.mma_sync(res_ty, shape_attr, nvvm.MMALayout.row, nvvm.MMALayout.col, a, b, c, **kw)
    for i, v in enumerate(k.elems(d, k.f32, 4)):
        k.sink(v, 64 + 4 * i)



# ---- ldmatrix / stmatrix -----------------------------------------------------------------

_LDST_PAT = {
    ("ld", 1, False): r"ldmatrix\.sync\.aligned\.m8n8\.x1\.shared\.b16 \{%r\d+\}, \[",
    ("ld", 1, True): r"ldmatrix\.sync\.aligned\.m8n8\.x1\.trans\.shared\.b16 \{%r\d+\}, \[",
    ("ld", 2, False): r"ldmatrix\.sync\.aligned\.m8n8\.x2\.shared\.b16 \{%r\d+, %r\d+\}",
    ("ld", 2, True): r"ldmatrix\.sync\.aligned\.m8n8\.x2\.trans\.shared\.b16 \{%r\d+, %r\d+\}",
    ("ld", 4, False): r"ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 \{%r\d+, %r\d+, %r\d+, %r\d+\}",
    ("ld", 4, True): r"ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16 \{%r\d+, %r\d+, %r\d+, %r\d+\}",
    ("st", 1, False): r"stmatrix\.sync\.aligned\.m8n8\.x1\.shared\.b16 \[[^\]]+\], \{%r\d+\}",
    ("st", 1, True): r"stmatrix\.sync\.aligned\.m8n8\.x1\.trans\.shared\.b16 \[",
    ("st", 2, False): r"stmatrix\.sync\.aligned\.m8n8\.x2\.shared\.b16 \[",
    ("st", 2, True): r"stmatrix\.sync\.aligned\.m8n8\.x2\.trans\.shared\.b16 \[",
    ("st", 4, False): r"stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16 \[",
    ("st", 4, True): r"stmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16 \[",
}


def _ldst_checks(kind):
    out = []
    chips = [(SM80, P70), (SM90A, P80), (SM100A, P86)] if kind == "ld" else [(SM90A, P80), (SM100A, P86)]
    for num in (1, 2, 4):
        for trans in (False, True):
            v = f"x{num}{'_trans' if trans else ''}"
            for chip, ptx in chips:
                out.append(Check(v, chip, ptx, patterns=[_LDST_PAT[(kind, num, trans)]]))
    if kind == "ld":
        out.append(Check("x4_generic_ptr", SM80, P70, expect="error", why="ptr"))
    else:
        out.append(Check("x4", SM80, P78, expect="abort", why="Cannot select: intrinsic %llvm.nvvm.stmatrix"))
        out.append(Check("x4", SM90A, P78, expect="abort", why="Minimum required PTX version is 8.0"))
    return out


@item("ldmatrix", _ldst_checks("ld"), "nvvm.ldmatrix x1/x2/x4, with and without .trans (b16, m8n8)")
def ldmatrix(k: Kernel, variant: str, chip: str):
    from mlir import ir
    from mlir.dialects import nvvm

    num = int(variant[1])
    layout = nvvm.MMALayout.col if "trans" in variant else nvvm.MMALayout.row
    shape = ir.Attribute.parse("#nvvm.ld_st_matrix_shape<m = 8, n = 8>")
    ptr = k.smem_generic if "generic" in variant else k.smem_at(256)
    # x1 returns a plain i32; x2 / x4 return !llvm.struct<(i32, i32[, i32, i32])>
    res_ty = k.i32 if num == 1 else k.struct([k.i32] * num)
    r = nvvm.ldmatrix(res_ty, ptr, num, layout, shape, nvvm.LdStMatrixEltType.B16)
    vals = [r] if num == 1 else k.elems(r, k.i32, num)
    for i, v in enumerate(vals):
        k.sink(v, 4 * i)


@item("stmatrix", _ldst_checks("st"), "nvvm.stmatrix x1/x2/x4, with and without .trans (sm_90+)")
def stmatrix(k: Kernel, variant: str, chip: str):
    from mlir import ir
    from mlir.dialects import nvvm

    num = int(variant[1])
    layout = nvvm.MMALayout.col if "trans" in variant else nvvm.MMALayout.row
    shape = ir.Attribute.parse("#nvvm.ld_st_matrix_shape<m = 8, n = 8>")
    vals = [k.opaque(k.i32, 4 * i) for i in range(num)]
    nvvm.stmatrix(k.smem_at(256), vals, layout, shape, nvvm.LdStMatrixEltType.B16)


# ---- cp.async ----------------------------------------------------------------------------


def _cp_async_checks():
    out = []
    for chip, ptx in [(SM80, P70), (SM90A, P80), (SM100A, P86)]:
        out.append(
            Check(
                "cg16_ca16_commit_wait",
                chip,
                ptx,
                patterns=[
                    r"cp\.async\.cg\.shared\.global \[[^\]]+\], \[%rd\d+\], 16;",
                    r"cp\.async\.ca\.shared\.global \[[^\]]+\], \[%rd\d+\], 16;",
                    r"cp\.async\.ca\.shared\.global \[[^\]]+\], \[%rd\d+\], 4;",
                    r"cp\.async\.ca\.shared\.global \[[^\]]+\], \[%rd\d+\], 8;",
                    r"cp\.async\.commit_group;",
                    r"cp\.async\.wait_group\s+1;",
                    r"cp\.async\.wait_group\s+0;",
                ],
            )
        )
    # zero-fill form: cp-size operand (src-size) = bytes really read; rest of the 16 is zero-filled
    out.append(
        Check("cg16_srcsize", SM80, P70, patterns=[r"cp\.async\.cg\.shared\.global \[[^\]]+\], \[%rd\d+\], 16, %r\d+;"])
    )
    out.append(Check("cg4_invalid", SM80, P70, expect="error", why="CG cache modifier is only support for 16 bytes"))
    return out


@item("cp_async", _cp_async_checks(), "cp.async 16B .cg/.ca global->shared, commit_group, wait_group N")
def cp_async(k: Kernel, variant: str, chip: str):
    from mlir.dialects import llvm, nvvm

    src = llvm.addrspacecast(k.ptr1, k.g)  # cp.async wants !llvm.ptr<1> (global) ...
    dst = k.smem_at(0)  # ... and !llvm.ptr<3> (shared) operands
    if variant == "cg4_invalid":
        nvvm.cp_async_shared_global(dst, src, 4, nvvm.LoadCacheModifierKind.CG)
        return
    if variant == "cg16_srcsize":
        n = k.opaque(k.i32)
        nvvm.cp_async_shared_global(dst, src, 16, nvvm.LoadCacheModifierKind.CG, cp_size=n)
        nvvm.cp_async_commit_group()
        nvvm.cp_async_wait_group(0)
        return
    nvvm.cp_async_shared_global(dst, src, 16, nvvm.LoadCacheModifierKind.CG)
    nvvm.cp_async_commit_group()
    nvvm.cp_async_shared_global(k.smem_at(16), src, 16, nvvm.LoadCacheModifierKind.CA)
    nvvm.cp_async_shared_global(k.smem_at(32), src, 4, nvvm.LoadCacheModifierKind.CA)
    nvvm.cp_async_shared_global(k.smem_at(40), src, 8, nvvm.LoadCacheModifierKind.CA)
    nvvm.cp_async_commit_group()
    nvvm.cp_async_wait_group(1)
    nvvm.cp_async_wait_group(0)


# ---- 16-byte vector loads / stores -------------------------------------------------------


def _vec16_checks():
    V4 = r"\{%r\d+, %r\d+, %r\d+, %r\d+\}"
    four = [
        r"ld\.global\.v4\.b32\s+" + V4 + r", \[%rd\d+\];",
        r"st\.shared\.v4\.b32\s+\[%rd\d+\], " + V4 + ";",
        r"ld\.shared\.v4\.b32\s+" + V4 + r", \[%rd\d+\+16\];",
        r"st\.global\.v4\.b32\s+\[%rd\d+\+4096\], " + V4 + ";",
    ]
    # sm_100a: LLVM 22 picks .v2.b64 for the same 16-byte access
    V2 = r"\{%rd\d+, %rd\d+\}"
    four_sm100 = [
        r"ld\.global\.v2\.b64\s+" + V2 + r", \[%rd\d+\];",
        r"st\.shared\.v2\.b64\s+\[%rd\d+\], " + V2 + ";",
        r"ld\.shared\.v2\.b64\s+" + V2 + r", \[%rd\d+\+16\];",
        r"st\.global\.v2\.b64\s+\[%rd\d+\+4096\], " + V2 + ";",
    ]
    out = [Check("llvm_load_v4i32", chip, ptx, patterns=four) for chip, ptx in [(SM80, P70), (SM90A, P80)]]
    out.append(Check("llvm_load_v4i32", SM100A, P86, patterns=four_sm100))
    out.append(Check("llvm_load_v8f16", SM80, P70, patterns=four))
    # alignment= left out: LLVM assumes the ABI alignment of the vector type (16 bytes
    # for vector<4xi32>), so the access is still a v4
    out.append(Check("llvm_load_v4i32_noalign", SM80, P70, patterns=four))
    # alignment=4: the global side is split into 4 scalar accesses (the shared side stays
    # v4 here only because LLVM can prove smem + tid*16 is 16-byte aligned)
    out.append(
        Check(
            "llvm_load_v4i32_align4",
            SM80,
            P70,
            patterns=[r"ld\.global\.b32\s+%r\d+, \[%rd\d+\+12\];", r"st\.global\.b32\s+\[%rd\d+\+4108\]"],
            absent=[r"(ld|st)\.global\.v4"],
        )
    )
    out.append(Check("vector_load_memref", SM80, P70, patterns=four))
    return out


@item("vec16", _vec16_checks(), "16-byte ld/st .v4.b32 from/to global and shared")
def vec16(k: Kernel, variant: str, chip: str):
    from mlir import ir
    from mlir.dialects import arith, llvm, nvvm, vector

    # thread-dependent offsets and a barrier keep LLVM from folding the shared round trip
    tid = nvvm.read_ptx_sreg_tid_x(k.i32)
    off = arith.muli(tid, k.const(k.i32, 16))
    if variant.startswith("llvm_load"):
        vt = ir.VectorType.get([8], k.f16) if "v8f16" in variant else ir.VectorType.get([4], k.i32)
        align = {} if "noalign" in variant else {"alignment": 4 if "align4" in variant else 16}
        gptr = llvm.addrspacecast(k.ptr1, k.g)  # the generic kernel pointer gives the same PTX
        gin = llvm.getelementptr(k.ptr1, gptr, [off], [-2147483648], k.i8, 0)
        sptr = llvm.getelementptr(k.ptr3, k.smem, [off], [-2147483648], k.i8, 0)
        v = llvm.load(vt, gin, **align)  # ld.global.v4.b32
        llvm.store(v, sptr, **align)  # st.shared.v4.b32
        nvvm.barrier0()
        sptr2 = llvm.getelementptr(k.ptr3, sptr, [], [16], k.i8, 0)
        w = llvm.load(vt, sptr2, **align)  # ld.shared.v4.b32
        gout = llvm.getelementptr(k.ptr1, gin, [], [4096], k.i8, 0)
        llvm.store(w, gout, **align)  # st.global.v4.b32
        return
    # vector.load / vector.store on memrefs (what a memref-level lowering produces)
    f16 = k.f16
    gm_ty = ir.MemRefType.get([4096], f16)
    sm_ty = ir.MemRefType.get([4096], f16, memory_space=ir.Attribute.parse("3"))
    gm = _memref_from_ptr(k, k.g, gm_ty)
    sm = _memref_from_ptr(k, k.smem, sm_ty)
    vt = ir.VectorType.get([8], f16)
    idx = arith.index_cast(ir.IndexType.get(), arith.muli(tid, k.const(k.i32, 8)))
    idx2 = arith.addi(idx, arith.constant(ir.IndexType.get(), 8))
    idx3 = arith.addi(idx, arith.constant(ir.IndexType.get(), 2048))
    v = vector.load(vt, gm, [idx], alignment=16)
    vector.store(v, sm, [idx], alignment=16)
    nvvm.barrier0()
    w = vector.load(vt, sm, [idx2], alignment=16)
    vector.store(w, gm, [idx3], alignment=16)


def _memref_from_ptr(k: Kernel, p, mty):
    """Build a static memref<NxT, space> value over pointer p (descriptor via the
    unrealized cast that finalize-memref-to-llvm resolves)."""
    from mlir import ir
    from mlir.dialects import builtin, llvm

    i64 = k.i64
    desc_ty = ir.Type.parse(
        f"!llvm.struct<({p.type}, {p.type}, i64, array<1 x i64>, array<1 x i64>)>"
    )
    d = llvm.mlir_undef(desc_ty)
    d = llvm.insertvalue(d, p, [0])
    d = llvm.insertvalue(d, p, [1])
    d = llvm.insertvalue(d, llvm.mlir_constant(ir.IntegerAttr.get(i64, 0)), [2])
    d = llvm.insertvalue(d, llvm.mlir_constant(ir.IntegerAttr.get(i64, mty.shape[0])), [3, 0])
    d = llvm.insertvalue(d, llvm.mlir_constant(ir.IntegerAttr.get(i64, 1)), [4, 0])
    return builtin.unrealized_conversion_cast([mty], [d])


# ---- shared-memory address for descriptors -----------------------------------------------


@item(
    "smem_addr",
    [
        Check(c, chip, ptx, patterns=pats)
        for chip, ptx in [(SM80, P70), (SM90A, P80), (SM100A, P86)]
        for c, pats in [
            ("ptrtoint_i32", [r"mov\.(b|u)64\s+%rd\d+, smem;", r"add\.s64\s+%rd\d+, %rd\d+, 1024;", r"st\.global\.(b|u)32"]),
            ("desc_start_field", [r"mov\.(b|u)64\s+%rd\d+, smem;", r"shr\.u64", r"and\.b64", r"st\.global\.(b|u)(32|64)"]),
            ("cvta_generic", [r"cvta\.shared\.(u64|b64)", r"cvta\.to\.shared\.(u64|b64)"]),
        ]
    ],
    "32-bit shared-memory address of a buffer: llvm.ptrtoint of an addrspace-3 pointer",
)
def smem_addr(k: Kernel, variant: str, chip: str):
    from mlir.dialects import arith, llvm

    if variant == "ptrtoint_i32":
        # offset of smem+1024 in the shared window, as an i32
        k.sink(llvm.ptrtoint(k.i32, k.smem_at(1024)))
    elif variant == "desc_start_field":
        # descriptor start-address field: (addr & 0x3FFFF) >> 4, OR-ed into a constant
        # built on the host (descriptors.py) with start address 0
        a = llvm.ptrtoint(k.i64, k.smem_at(1024))
        f = arith.shrui(arith.andi(a, k.const(k.i64, 0x3FFFF)), k.const(k.i64, 4))
        desc = arith.ori(f, k.const(k.i64, 0x4000004000010000))
        k.sink(desc)
    else:
        # a generic pointer that points into shared memory: addrspacecast it back first
        gp = llvm.load(k.ptr, k.g)
        sp = llvm.addrspacecast(k.ptr3, gp)
        k.sink(llvm.ptrtoint(k.i32, sp), 8)
        k.sink(llvm.ptrtoint(k.i64, k.smem_generic), 16)


# ---- mbarrier ------------------------------------------------------------------------------


def _mbarrier_checks():
    init = r"mbarrier\.init\.shared\.b64\s+\[[^\]]+\], %r\d+;"
    arrive = r"mbarrier\.arrive\.shared\.b64\s+%rd\d+, \[[^\]]+\];"
    user_wait = r"mbarrier\.try_wait\.parity\.shared\.b64 %p\d+, \[[^\]]+\], %r\d+;"
    loop = r"@%p\d+ bra\s+\$L__BB0_\d+;"
    builtin_wait = r"mbarrier\.try_wait\.parity\.shared\.b64 P1, \[%r\d+\], %r\d+, %r\d+;"
    expect_tx = r"mbarrier\.arrive\.expect_tx\.shared\.b64 %rd\d+, \[[^\]]+\], %r\d+;"
    out = []
    for chip, ptx in [(SM90A, P80), (SM100A, P86)]:
        out.append(Check("init_arrive_trywait_loop", chip, ptx, patterns=[init, arrive, user_wait, loop]))
        out.append(Check("builtin_wait_loop", chip, ptx, patterns=[builtin_wait, r"bra\.uni\s+LAB_WAIT;"]))
        out.append(Check("builtin_wait_loop_twice", chip, ptx, patterns=[builtin_wait]))
        out.append(Check("expect_tx", chip, ptx, patterns=[expect_tx, r"fence\.mbarrier_init\.release\.cluster;"]))
    # sm_80: mbarrier.init / arrive exist (sm_80), try_wait does not (sm_90+)
    # (test_wait.parity needs +ptx71: with +ptx70 the intrinsic cannot be selected)
    out.append(Check("init_arrive_test_wait", SM80, P70, expect="abort", why="Cannot select: intrinsic %llvm.nvvm.mbarrier.test.wait.parity"))
    out.append(Check("init_arrive_test_wait", SM80, "+ptx71", patterns=[init, arrive, r"mbarrier\.test_wait\.parity\.shared\.b64 %p\d+, \[[^\]]+\], %r\d+;"]))
    out.append(Check("init_arrive_trywait_loop", SM80, P78, expect="abort", why="Cannot select: intrinsic %llvm.nvvm.mbarrier.try.wait.parity"))
    # nvvm.mbarrier.try_wait.parity is inline PTX: it lowers for sm_80, ptxas refuses it
    out.append(Check("builtin_wait_loop", SM80, P78, expect="ptxas", why="requires .target sm_90 or higher"))
    out.append(Check("expect_tx", SM80, P78, expect="abort", why="Cannot select: intrinsic %llvm.nvvm.mbarrier.arrive.expect.tx"))
    return out


@item("mbarrier", _mbarrier_checks(), "mbarrier init / arrive / arrive.expect_tx / try_wait.parity in a loop")
def mbarrier(k: Kernel, variant: str, chip: str):
    from mlir import ir
    from mlir.dialects import arith, nvvm, scf

    bar = k.smem_at(0)  # !llvm.ptr<3>: 8-byte mbarrier object in shared memory
    if variant == "expect_tx":
        nvvm.mbarrier_init(bar, k.const(k.i32, 1))
        nvvm.fence_mbarrier_init()
        nvvm.barrier0()
        st = nvvm.mbarrier_arrive_expect_tx(k.i64, bar, k.const(k.i32, 16384))
        k.sink(st)
        nvvm.mbarrier_arrive_expect_tx(None, bar, k.const(k.i32, 64))  # res=None: no token value
        nvvm.mbarrier_arrive(None, bar)
        nvvm.mbarrier_try_wait_parity(bar, k.const(k.i32, 0), k.const(k.i32, 0))
        return
    if variant.startswith("builtin_wait_loop"):
        # nvvm.mbarrier.try_wait.parity has no result: it lowers to its own retry loop
        # (inline PTX with block-scoped labels, so it can appear more than once)
        nvvm.mbarrier_try_wait_parity(bar, k.opaque(k.i32), k.const(k.i32, 1000000))
        if variant.endswith("twice"):
            nvvm.mbarrier_try_wait_parity(k.smem_at(8), k.opaque(k.i32, 4), k.const(k.i32, 1000000))
        return
    if variant == "init_arrive_test_wait":
        nvvm.mbarrier_init(bar, nvvm.read_ptx_sreg_ntid_x(k.i32))
        nvvm.barrier0()
        k.sink(nvvm.mbarrier_arrive(k.i64, bar), 8)
        w = scf.WhileOp([], [])
        before = w.before.blocks.append()
        with ir.InsertionPoint(before):
            done = nvvm.mbarrier_test_wait(k.i1, bar, k.opaque(k.i32, 16))  # non-blocking probe
            scf.condition(arith.xori(done, k.const(k.i1, 1)), [])
        with ir.InsertionPoint(w.after.blocks.append()):
            scf.yield_([])
        return
    count = nvvm.read_ptx_sreg_ntid_x(k.i32)
    nvvm.mbarrier_init(bar, count)
    nvvm.barrier0()
    state = nvvm.mbarrier_arrive(k.i64, bar)  # i64 state token
    k.sink(state, 8)
    # a hand-written wait loop: scf.while on nvvm.mbarrier.try_wait with an i32 phase parity
    phase = k.opaque(k.i32, 16)
    w = scf.WhileOp([], [])
    before = w.before.blocks.append()
    with ir.InsertionPoint(before):
        done = nvvm.mbarrier_try_wait(k.i1, bar, phase)  # i32 operand -> .parity form
        notdone = arith.xori(done, k.const(k.i1, 1))
        scf.condition(notdone, [])
    after = w.after.blocks.append()
    with ir.InsertionPoint(after):
        scf.yield_([])


# ---- fences, elect.sync, bar.sync, setmaxnreg -----------------------------------------------


def _sync_checks():
    out = []
    for chip, ptx in [(SM90A, P80), (SM100A, P86)]:
        out.append(Check("fence_proxy_async_shared_cta", chip, ptx, patterns=[r"fence\.proxy\.async\.shared::cta;"]))
        out.append(Check("fence_proxy_async", chip, ptx, patterns=[r"fence\.proxy\.async;"]))
        out.append(Check("fence_mbarrier_init", chip, ptx, patterns=[r"fence\.mbarrier_init\.release\.cluster;"]))
        out.append(Check("elect_sync", chip, ptx, patterns=[r"elect\.sync\s+%r\d+\|%p\d+, -1;"]))
        out.append(
            Check(
                "setmaxnreg",
                chip,
                ptx,
                patterns=[r"setmaxnreg\.inc\.sync\.aligned\.u32\s+232;", r"setmaxnreg\.dec\.sync\.aligned\.u32\s+40;"],
            )
        )
    for chip, ptx in [(SM80, P70), (SM90A, P80), (SM100A, P86)]:
        out.append(
            Check(
                "bar_sync",
                chip,
                ptx,
                patterns=[r"bar\.sync\s+0;", r"bar\.sync\s+1, 128;|barrier\.sync\.aligned\s+1, 128;", r"bar\.sync\s+%r\d+|barrier\.sync\.aligned\s+%r\d+"],
            )
        )
    out.append(Check("elect_sync", SM80, P78, expect="abort", why="Cannot select"))
    out.append(Check("setmaxnreg", SM80, P78, expect="abort", why="Cannot select"))
    out.append(Check("setmaxnreg", "sm_90", P80, expect="abort", why="Cannot select"))
    out.append(Check("fence_proxy_async_shared_cta", SM80, P78, expect="abort", why="LLVM ERROR"))
    out.append(Check("fence_mbarrier_init", SM80, P78, expect="abort", why="LLVM ERROR"))
    return out


@item("sync", _sync_checks(), "fence.proxy.async, fence.mbarrier_init, elect.sync, bar.sync, setmaxnreg")
def sync_ops(k: Kernel, variant: str, chip: str):
    from mlir.dialects import nvvm

    if variant == "fence_proxy_async_shared_cta":
        nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)
    elif variant == "fence_proxy_async":
        nvvm.fence_proxy(nvvm.ProxyKind.async_)
    elif variant == "fence_mbarrier_init":
        nvvm.fence_mbarrier_init()
    elif variant == "elect_sync":
        p = nvvm.elect_sync(k.i1)  # membermask defaults to 0xffffffff
        k.sink(p)
    elif variant == "setmaxnreg":
        nvvm.setmaxregister(232, nvvm.SetMaxRegisterAction.increase)
        nvvm.setmaxregister(40, nvvm.SetMaxRegisterAction.decrease)
    elif variant == "bar_sync":
        nvvm.barrier0()  # bar.sync 0
        nvvm.barrier(None, barrier_id=k.const(k.i32, 1), number_of_threads=k.const(k.i32, 128))
        nvvm.barrier(None, barrier_id=k.opaque(k.i32))


# ---- wgmma -------------------------------------------------------------------------------------


def _wgmma_checks():
    out = []
    for t in ("f16", "bf16"):
        for n in (8, 64, 128, 256):
            pat = rf"wgmma\.mma_async\.sync\.aligned\.m64n{n}k16\.f32\.{t}\.{t}"
            out.append(Check(f"{t}_n{n}", SM90A, P80, patterns=[pat, r"wgmma\.fence\.sync\.aligned;", r"wgmma\.commit_group\.sync\.aligned;", r"wgmma\.wait_group\.sync\.aligned\s+0;"]))
    out.append(Check("f16_n128_scale_d_zero", SM90A, P80, patterns=[r"wgmma\.mma_async\.sync\.aligned\.m64n128k16\.f32\.f16\.f16"]))
    out.append(Check("f16_n64_dynamic_scale_d", SM90A, P80, patterns=[r"setp\.ne\.b32\s+p, %r\d+, 0;", r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16"]))
    # off sm_90a the NVVM target check refuses the wgmma ops with a clean error (no abort)
    out.append(Check("f16_n64", SM100A, P86, expect="error", why="'nvvm.wgmma.fence.aligned' op is not supported on sm_100a"))
    out.append(Check("f16_n64", "sm_90", P80, expect="error", why="'nvvm.wgmma.fence.aligned' op is not supported on sm_90"))
    return out


@item("wgmma", _wgmma_checks(), "wgmma fence / mma_async m64nNk16 f16,bf16 -> f32 from smem descriptors / commit / wait")
def wgmma(k: Kernel, variant: str, chip: str):
    from mlir import ir
    from mlir.dialects import llvm, nvvm

    parts = variant.split("_")
    t = parts[0]
    n = int(parts[1][1:])
    wt = nvvm.WGMMATypes.f16 if t == "f16" else nvvm.WGMMATypes.bf16
    acc_ty = k.struct([k.f32] * (n // 2))  # m64nNk16, f32 accumulate: N/2 f32 per thread
    # accumulator in: an llvm.struct value; here zeros built with insertvalue
    acc = llvm.mlir_undef(acc_ty)
    zero = k.const(k.f32, 0.0)
    for i in range(n // 2):
        acc = llvm.insertvalue(acc, zero, [i])
    desc_a = k.opaque(k.i64, 0)  # i64 smem descriptors (see tilemlir/lowering/cuda/descriptors.py)
    desc_b = k.opaque(k.i64, 8)
    shape = ir.Attribute.parse(f"#nvvm.shape<m = 64, n = {n}, k = 16>")
    scale_d = nvvm.WGMMAScaleOut.zero if "scale_d_zero" in variant else nvvm.WGMMAScaleOut.one
    nvvm.wgmma_fence_aligned()
    if "dynamic_scale_d" in variant:
        scale = k.opaque(k.i32, 4)  # runtime 0/1
        acc = _wgmma_dynamic_scale_d(k, acc, acc_ty, desc_a, desc_b, n, t, scale)
    else:
        acc = nvvm.wgmma_mma_async(
            acc_ty, acc, desc_a, desc_b, shape,
            wt, wt, nvvm.WGMMATypes.f32,
            scale_d, nvvm.WGMMAScaleIn.one, nvvm.WGMMAScaleIn.one,
            nvvm.MMALayout.row, nvvm.MMALayout.col,  # row/col = K-major A and B (no transpose)
        )
    nvvm.wgmma_commit_group_sync_aligned()
    nvvm.wgmma_wait_group_sync_aligned(0)
    for i in range(n // 2):
        k.sink(llvm.extractvalue(k.f32, acc, [i]), 16 + 4 * i)


def _wgmma_dynamic_scale_d(k, acc, acc_ty, desc_a, desc_b, n, t, scale):
    """wgmma with a runtime scale-d: nvvm.wgmma.mma_async only takes scale-d as an
    attribute, so this goes through llvm.inline_asm (the same text the op emits, with
    the predicate fed from an i32 operand)."""
    from mlir.dialects import llvm

    m = n // 2
    regs = ", ".join(f"${i}" for i in range(m))
    asm = (
        "{\n.reg .pred p;\n"
        f"setp.ne.b32 p, ${m + 2}, 0;\n"
        f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{t}.{t} "
        f"{{{regs}}}, ${m}, ${m + 1}, p, 1, 1, 0, 0;\n}}"
    )
    cons = ",".join(["=f"] * m + ["l", "l", "r"] + [str(i) for i in range(m)])
    accs = [llvm.extractvalue(k.f32, acc, [i]) for i in range(m)]
    return llvm.inline_asm(acc_ty, [desc_a, desc_b, scale] + accs, asm, cons, has_side_effects=True)


# ---- wgmma on hardware: descriptors, K-step and the dynamic scale-d, end to end ----------------
#
# One warpgroup computes D[64x64] = A[64x64] . B[64x64]^T (f16 -> f32), A and B K-major
# (row-major M x K and N x K).  The kernel copies A and B into shared memory with the
# 128B swizzle applied by hand (XOR of address bits 4-6 with 7-9, 1024-aligned tiles),
# builds the descriptors as constant | ((smem_addr & 0x3FFFF) >> 4) with the constant
# from tilemlir.lowering.cuda.descriptors, steps K by +32 bytes (+2 in the start field)
# four times and writes the accumulator fragment to global memory.
# Global buffer: A at 0, B at 8192, D (f32) at 16384, an i32 0 at 32768.
# ``--hw-emit DIR`` writes the PTX here; ``--hw-run DIR`` (on a machine with a GPU,
# cupy and tilemlir, for ptxas) assembles, runs and compares with numpy.

HW_VARIANTS = (
    "lbo16", "lbo_layout", "dynamic_scale_d",  # 128B swizzle, K = 64 = one 128-byte chunk
    "sw64", "sw32",  # K = 64 spans 2 / 4 swizzle chunks: the K step crosses chunks
    "interleave",  # no swizzle: 8x16-byte core matrices, LBO = 128, SBO = 1024
    "control_no_k_step",  # must NOT match: proves the comparison sees a wrong descriptor
)


@item(
    "wgmma_hw",
    [Check(v, SM90A, P80, patterns=[r"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.f16\.f16"]) for v in HW_VARIANTS],
    "wgmma m64n64k16 end to end (descriptors + K step + swizzle); run on a GPU with --hw-emit/--hw-run",
)
def wgmma_hw(k: Kernel, variant: str, chip: str):
    from mlir import ir
    from mlir.dialects import arith, llvm, nvvm

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    from tilemlir.lowering.cuda.descriptors import KMajorTile

    mode = {"sw64": "64B", "sw32": "32B", "interleave": "none"}.get(variant, "128B")
    i32, i64 = k.i32, k.i64
    c = lambda ty, v: k.const(ty, v)  # noqa: E731
    tid = nvvm.read_ptx_sreg_tid_x(i32)
    v4 = ir.VectorType.get([4], i32)
    for it in range(4):  # 64 rows x 8 chunks of 16 B = 512 chunks per operand, 128 threads
        idx = arith.addi(tid, c(i32, 128 * it))
        r, c16 = arith.shrui(idx, c(i32, 3)), arith.andi(idx, c(i32, 7))
        gsrc = arith.muli(idx, c(i32, 16))  # row-major source: r * 128 + c16 * 16
        if mode == "none":  # core matrix (r/8, c16) at (r/8)*SBO + c16*LBO, row r%8 inside it
            dst_off = arith.addi(
                arith.addi(arith.muli(arith.shrui(r, c(i32, 3)), c(i32, 1024)), arith.muli(c16, c(i32, 128))),
                arith.muli(arith.andi(r, c(i32, 7)), c(i32, 16)),
            )
        else:  # K-chunk kc of W bytes at kc * 64 * W; row r at r * W inside; then the XOR
            width = int(mode[:-1])
            per = width // 16
            kc, within = arith.divui(c16, c(i32, per)), arith.remui(c16, c(i32, per))
            off = arith.addi(
                arith.addi(arith.muli(kc, c(i32, 64 * width)), arith.muli(r, c(i32, width))),
                arith.muli(within, c(i32, 16)),
            )
            mask = ((width // 16) - 1) << 4  # chunk bits [4, 4+b) ^= address bits [7, 7+b)
            dst_off = arith.xori(off, arith.andi(arith.shrui(off, c(i32, 3)), c(i32, mask)))
        for base in (0, 8192):
            src = llvm.getelementptr(k.ptr, k.g, [arith.addi(gsrc, c(i32, base))], [-2147483648], k.i8, 0)
            dst = llvm.getelementptr(k.ptr3, k.smem, [arith.addi(dst_off, c(i32, base))], [-2147483648], k.i8, 0)
            llvm.store(llvm.load(v4, src, alignment=16), dst, alignment=16)
    nvvm.fence_proxy(nvvm.ProxyKind.async_shared, space=nvvm.SharedSpace.shared_cta)  # generic -> async proxy
    nvvm.barrier0()
    lbo = 16 if variant == "lbo16" else None  # None: the layout default (ignored by HW when swizzled)
    tile = KMajorTile(16, mode, 64, 64, 0, lbo=lbo)
    saddr = llvm.ptrtoint(i64, k.smem)
    field = lambda a: arith.shrui(arith.andi(a, c(i64, 0x3FFFF)), c(i64, 4))  # noqa: E731
    field_a, field_b = field(saddr), field(arith.addi(saddr, c(i64, 8192)))
    acc_ty = k.struct([k.f32] * 32)
    acc = llvm.mlir_undef(acc_ty)
    init = 1.0e9 if variant == "dynamic_scale_d" else 0.0  # garbage that scale-d = 0 must drop
    for i in range(32):
        acc = llvm.insertvalue(acc, c(k.f32, init), [i])
    zero = k.opaque(i32, 32768)  # 0 at run time, unknown to the compiler
    nvvm.wgmma_fence_aligned()
    shape = ir.Attribute.parse("#nvvm.shape<m = 64, n = 64, k = 16>")
    for kk in range(4):
        # descriptor of the K-slice kk: host constant (start field = the K offset, via
        # KMajorTile.k_offset_bytes) + the runtime start field of the tile; the control
        # keeps slice 0 for every kk
        const = tile.wgmma_descriptor(0 if variant == "control_no_k_step" else 16 * kk)
        const = const - (1 << 64) if const >= 1 << 63 else const  # a signed i64 attribute
        da, db = arith.addi(c(i64, const), field_a), arith.addi(c(i64, const), field_b)
        if variant == "dynamic_scale_d":
            scale = arith.extui(i32, arith.cmpi(arith.CmpIPredicate.ne, arith.addi(zero, c(i32, kk)), c(i32, 0)))
            acc = _wgmma_dynamic_scale_d(k, acc, acc_ty, da, db, 64, "f16", scale)
        else:
            acc = nvvm.wgmma_mma_async(
                acc_ty, acc, da, db, shape, nvvm.WGMMATypes.f16, nvvm.WGMMATypes.f16, nvvm.WGMMATypes.f32,
                nvvm.WGMMAScaleOut.one, nvvm.WGMMAScaleIn.one, nvvm.WGMMAScaleIn.one,
                nvvm.MMALayout.row, nvvm.MMALayout.col,
            )
    nvvm.wgmma_commit_group_sync_aligned()
    nvvm.wgmma_wait_group_sync_aligned(0)
    warp, lane = arith.shrui(tid, c(i32, 5)), arith.andi(tid, c(i32, 31))
    row0 = arith.addi(arith.muli(warp, c(i32, 16)), arith.shrui(lane, c(i32, 2)))
    col0 = arith.muli(arith.andi(lane, c(i32, 3)), c(i32, 2))
    for i in range(32):  # D fragment: row = 16*warp + lane/4 + 8*((i/2)%2), col = 8*(i/4) + 2*(lane%4) + i%2
        row = arith.addi(row0, c(i32, 8 * ((i // 2) % 2)))
        col = arith.addi(col0, c(i32, 8 * (i // 4) + i % 2))
        off = arith.addi(c(i32, 16384), arith.muli(arith.addi(arith.muli(row, c(i32, 64)), col), c(i32, 4)))
        dst = llvm.getelementptr(k.ptr, k.g, [off], [-2147483648], k.i8, 0)
        llvm.store(llvm.extractvalue(k.f32, acc, [i]), dst)


def hw_emit(out_dir: str) -> int:
    """Write wgmma_hw_<variant>.ptx (sm_90a) into out_dir, each built in a child process."""
    os.makedirs(out_dir, exist_ok=True)
    for v in HW_VARIANTS:
        p = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", "wgmma_hw", v, SM90A, P80],
            capture_output=True, text=True,
        )
        if p.returncode:
            print(f"FAIL wgmma_hw/{v}: {p.stderr.strip()[-300:]}")
            return 1
        with open(os.path.join(out_dir, f"wgmma_hw_{v}.ptx"), "w") as f:
            f.write(p.stdout)
        print(f"wrote {out_dir}/wgmma_hw_{v}.ptx")
    return 0


def hw_run(ptx_dir: str) -> int:
    """Assemble and run the wgmma_hw kernels on the local GPU (cupy); compare with numpy."""
    import cupy as cp
    import numpy as np

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, (64, 64)).astype(np.float16)  # B stored N x K (K-major)
    ref = a.astype(np.float32) @ b.astype(np.float32).T
    fails = 0
    for v in HW_VARIANTS:
        src = os.path.join(ptx_dir, f"wgmma_hw_{v}.ptx")
        cubin = src[:-4] + ".cubin"
        q = subprocess.run([_ptxas() or "ptxas", "-arch=sm_90a", src, "-o", cubin], capture_output=True, text=True)
        if q.returncode:
            print(f"FAIL wgmma_hw/{v} ptxas: {q.stderr.strip()[:300]}")
            fails += 1
            continue
        buf = np.zeros(36864, dtype=np.uint8)
        buf[0:8192] = a.view(np.uint8).ravel()
        buf[8192:16384] = b.view(np.uint8).ravel()
        buf[16384:32768] = np.full(4096, np.nan, dtype=np.float32).view(np.uint8)
        dbuf = cp.asarray(buf)
        fn = cp.RawModule(path=cubin).get_function("kern")
        fn((1,), (128,), (dbuf,))
        cp.cuda.Device().synchronize()
        d = cp.asnumpy(dbuf)[16384:32768].view(np.float32).reshape(64, 64)
        err = float(np.max(np.abs(d - ref)))
        match = bool(np.isfinite(d).all() and err < 1e-2)
        ok = match != v.startswith("control")
        fails += 0 if ok else 1
        name = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
        what = "matches" if match else "differs (as a control should)" if ok else "DIFFERS"
        print(f"{'OK  ' if ok else 'FAIL'} wgmma_hw/{v:18s} sm_90a on {name}: max |D - A.B^T| = {err:.3g}, {what}")
    return fails


# ---- tcgen05 (sm_100a) ----------------------------------------------------------------------

TC = [(SM100A, P86), (SM100A, P88)]


def _tc_alloc_checks():
    out = []
    for chip, ptx in TC:
        for g in (1, 2):
            out.append(
                Check(
                    f"cta{g}",
                    chip,
                    ptx,
                    patterns=[
                        rf"tcgen05\.alloc\.cta_group::{g}\.sync\.aligned\.shared::cta\.b32\s+\[[^\]]+\], %r\d+;",
                        rf"tcgen05\.relinquish_alloc_permit\.cta_group::{g}\.sync\.aligned;",
                        rf"ld\.shared\.b32\s+%r\d+, \[smem\]",
                        rf"tcgen05\.dealloc\.cta_group::{g}\.sync\.aligned\.b32\s+%r\d+, %r\d+;",
                    ],
                )
            )
    out.append(Check("cta1", SM100A, P80, expect="abort", why="Minimum required PTX version is 8.6"))
    # off sm_100a/sm_101a/... the NVVM target check gives a clean error (no abort)
    out.append(Check("cta1", SM90A, P80, expect="error", why="'nvvm.tcgen05.alloc' op is not supported on sm_90a"))
    out.append(Check("cta1", "sm_100", P86, expect="error", why="'nvvm.tcgen05.alloc' op is not supported on sm_100"))
    return out


@item("tcgen05_alloc", _tc_alloc_checks(), "tcgen05.alloc (address -> smem) / relinquish_alloc_permit / dealloc")
def tcgen05_alloc(k: Kernel, variant: str, chip: str):
    from mlir.dialects import llvm, nvvm

    g = nvvm.CTAGroupKind.CTA_2 if variant == "cta2" else nvvm.CTAGroupKind.CTA_1
    ncols = k.const(k.i32, 128)  # power of two, 32..512
    slot = k.smem_at(0)  # !llvm.ptr<3>: tcgen05.alloc writes the TMEM address (b32) here
    nvvm.tcgen05_alloc(slot, ncols, group=g)
    nvvm.tcgen05_relinquish_alloc_permit(group=g)
    nvvm.tcgen05_fence(nvvm.Tcgen05FenceKind.BEFORE_THREAD_SYNC)
    nvvm.barrier0()
    nvvm.tcgen05_fence(nvvm.Tcgen05FenceKind.AFTER_THREAD_SYNC)
    taddr_i32 = llvm.load(k.i32, slot)  # read the TMEM address back
    k.sink(taddr_i32)
    taddr = llvm.inttoptr(k.ptr6, taddr_i32)  # !llvm.ptr<6> for dealloc / mma / ld / st
    nvvm.tcgen05_dealloc(taddr, ncols, group=g)


def _tc_mma_checks():
    out = []
    for chip, ptx in TC:
        for g in (1, 2):
            out.append(
                Check(
                    f"f16_cta{g}",
                    chip,
                    ptx,
                    patterns=[
                        rf"tcgen05\.mma\.cta_group::{g}\.kind::f16\.collector::a::discard\s+\[%r\d+\], %rd\d+, %rd\d+, %r\d+, %p\d+;",
                    ],
                )
            )
            out.append(Check(f"tf32_cta{g}", chip, ptx, patterns=[rf"tcgen05\.mma\.cta_group::{g}\.kind::tf32\.collector::a::discard\s+\[%r\d+\], %rd\d+, %rd\d+, %r\d+, %p\d+;"]))
        out.append(
            Check("f16_cta1_a_tmem", chip, ptx, patterns=[r"tcgen05\.mma\.cta_group::1\.kind::f16\.collector::a::discard\s+\[%r\d+\], \[%r\d+\], %rd\d+, %r\d+, %p\d+;"])
        )
        out.append(
            Check("f16_cta1_smem_desc_op", chip, ptx, patterns=[r"or\.b64\s+%rd\d+, %rd\d+, 4611756662049538048;", r"tcgen05\.mma\.cta_group::1\.kind::f16\.collector::a::discard\s+\[%r\d+\], %rd\d+, %rd\d+, %r\d+, %p\d+;"])
        )
    out.append(Check("f16_cta1", SM90A, P80, expect="error", why="not supported on sm_90a"))
    return out


@item("tcgen05_mma", _tc_mma_checks(), "tcgen05.mma kind::f16 / tf32, cta_group::1 and ::2, smem descriptors, dynamic enable-input-d")
def tcgen05_mma(k: Kernel, variant: str, chip: str):
    from mlir.dialects import arith, llvm, nvvm

    g = nvvm.CTAGroupKind.CTA_2 if "cta2" in variant else nvvm.CTAGroupKind.CTA_1
    kind = nvvm.Tcgen05MMAKind.TF32 if variant.startswith("tf32") else nvvm.Tcgen05MMAKind.F16
    d_tmem = llvm.inttoptr(k.ptr6, k.opaque(k.i32, 0))  # accumulator D in tensor memory
    if variant.endswith("smem_desc_op"):
        # nvvm.tcgen05.mma_smem_desc packs already-encoded fields ((x & 0x3FFFF) >> 4) into i64;
        # constant LBO=1, SBO=64, swizzle=2 (128B) fold to 0x4000404000010000 | start
        start = k.opaque(k.i32, 4)
        a_desc = nvvm.tcgen05_mma_smem_desc(
            k.i64, start, k.const(k.i32, 1), k.const(k.i32, 64), k.const(k.i8, 0), k.const(k.i1, 0), k.const(k.i8, 2)
        )
    elif variant.endswith("a_tmem"):
        a_desc = llvm.inttoptr(k.ptr6, k.opaque(k.i32, 4))  # A from tensor memory (.kind::f16 only K-major)
    else:
        a_desc = k.opaque(k.i64, 8)
    b_desc = k.opaque(k.i64, 16)
    idesc = k.opaque(k.i32, 24)  # 32-bit instruction descriptor (descriptors.tcgen05_idesc)
    enable_d = arith.trunci(k.i1, k.opaque(k.i32, 28))  # runtime i1: accumulate or overwrite
    nvvm.tcgen05_mma(kind, g, d_tmem, a_desc, b_desc, idesc, enable_d)


def _tc_commit_checks():
    out = []
    for chip, ptx in TC:
        for g in (1, 2):
            out.append(Check(f"cta{g}", chip, ptx, patterns=[rf"tcgen05\.commit\.cta_group::{g}\.mbarrier::arrive::one\.shared::cluster\.b64\s+\[[^\]]+\];"]))
            out.append(
                Check(
                    f"cta{g}_multicast",
                    chip,
                    ptx,
                    patterns=[rf"tcgen05\.commit\.cta_group::{g}\.mbarrier::arrive::one\.shared::cluster\.multicast::cluster\.b64\s+\[[^\]]+\], %rs\d+;"],
                )
            )
        # a generic pointer is cvta'd to shared and still uses the .shared::cluster form
        out.append(Check("cta1_generic", chip, ptx, patterns=[r"cvta\.shared\.u64", r"tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\.shared::cluster\.b64\s+\[%rd\d+\];"]))
    return out


@item("tcgen05_commit", _tc_commit_checks(), "tcgen05.commit to an mbarrier, cta_group 1/2, with and without multicast")
def tcgen05_commit(k: Kernel, variant: str, chip: str):
    from mlir.dialects import nvvm

    g = nvvm.CTAGroupKind.CTA_2 if "cta2" in variant else nvvm.CTAGroupKind.CTA_1
    bar = k.smem_generic if "generic" in variant else k.smem_at(64)  # ptr<3> -> .shared::cluster
    if "multicast" in variant:
        mask = k.opaque(k.i16, 0)  # i16 CTA mask
        nvvm.tcgen05_commit(bar, multicast_mask=mask, group=g)
    else:
        nvvm.tcgen05_commit(bar, group=g)


_LDST_SHAPES = {
    "32x32b": ("SHAPE_32X32B", 1, [1, 2, 4, 8, 16, 32, 64, 128]),
    "16x64b": ("SHAPE_16X64B", 1, [1, 2, 4, 8, 16, 32, 64, 128]),
    "16x128b": ("SHAPE_16X128B", 2, [1, 2, 4, 8, 16, 32, 64]),
    "16x256b": ("SHAPE_16X256B", 4, [1, 2, 4, 8, 16, 32]),
    "16x32bx2": ("SHAPE_16X32BX2", 1, [1, 2, 4, 8, 16, 32, 64, 128]),
}


def _tc_ldst_checks(kind):
    out = []
    for shp, (_, per, nums) in _LDST_SHAPES.items():
        for num in nums:
            regs = per * num
            if kind == "ld":
                pat = rf"tcgen05\.ld\.sync\.aligned\.{shp}\.x{num}(\.pack::16b)?\.b32\s+\{{(%r\d+, ){{{regs - 1}}}%r\d+\}}, \[%r\d+\]"
            else:
                pat = rf"tcgen05\.st\.sync\.aligned\.{shp}\.x{num}(\.unpack::16b)?\.b32\s+\[%r\d+\](, \d+)?, \{{(%r\d+, ){{{regs - 1}}}%r\d+\}}"
            wait = r"tcgen05\.wait::ld\.sync\.aligned;" if kind == "ld" else r"tcgen05\.wait::st\.sync\.aligned;"
            out.append(Check(f"{shp}_x{num}", SM100A, P86, patterns=[pat, wait]))
    if kind == "ld":
        out.append(Check("32x32b_x4_pack", SM100A, P86, patterns=[r"tcgen05\.ld\.sync\.aligned\.32x32b\.x4\.pack::16b\.b32"]))
        # one register: the result is a plain i32; vector<1xi32> is refused by the verifier
        out.append(Check("32x32b_x1_v1", SM100A, P86, expect="error", why="but got 'vector<1xi32>'"))
    else:
        out.append(Check("32x32b_x4_unpack", SM100A, P86, patterns=[r"tcgen05\.st\.sync\.aligned\.32x32b\.x4\.unpack::16b\.b32"]))
    return out


def _tc_ldst_body(k: Kernel, variant: str, kind: str):
    from mlir import ir
    from mlir.dialects import llvm, nvvm

    shp, rest = variant.split("_", 1)
    num = int(rest.split("_")[0][1:])
    enum_name, per, _ = _LDST_SHAPES[shp]
    shape = getattr(nvvm.Tcgen05LdStShape, enum_name)
    regs = per * num
    # N registers: vector<N x i32> for N >= 2, a plain i32 for N == 1
    vt = k.i32 if regs == 1 and not rest.endswith("_v1") else ir.VectorType.get([regs], k.i32)
    res_ty = vt
    taddr = llvm.inttoptr(k.ptr6, k.opaque(k.i32, 0))
    offset = k.const(k.i64, 32) if shp == "16x32bx2" else None  # immediate column offset
    if kind == "ld":
        v = nvvm.tcgen05_ld(res_ty, shape, taddr, pack="pack" in rest, offset=offset)
        nvvm.tcgen05_wait(nvvm.Tcgen05WaitKind.LOAD)
        k.sink(v, 16)
    else:
        v = k.opaque(vt, 16)
        nvvm.tcgen05_st(shape, taddr, v, unpack="unpack" in rest, offset=offset)
        nvvm.tcgen05_wait(nvvm.Tcgen05WaitKind.STORE)


@item("tcgen05_ld", _tc_ldst_checks("ld"), "tcgen05.ld .32x32b/.16x64b/.16x128b/.16x256b/.16x32bx2 .x1...x128 + wait::ld")
def tcgen05_ld(k: Kernel, variant: str, chip: str):
    _tc_ldst_body(k, variant, "ld")


@item("tcgen05_st", _tc_ldst_checks("st"), "tcgen05.st (same shapes) + wait::st")
def tcgen05_st(k: Kernel, variant: str, chip: str):
    _tc_ldst_body(k, variant, "st")


# --------------------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------------------


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("items", nargs="*", help="item names (default: all)")
    ap.add_argument("--chip", help="only checks for this chip (sm_80, sm_90a, sm_100a)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--ptx", nargs=4, metavar=("ITEM", "VARIANT", "CHIP", "PTXFEAT"), help="print the PTX of one build")
    ap.add_argument("--hw-emit", metavar="DIR", help="write the wgmma_hw PTX files into DIR (needs MLIR)")
    ap.add_argument("--hw-run", metavar="DIR", help="assemble and run the wgmma_hw PTX of DIR on a GPU (cupy)")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child_main(*args.child)
    if args.ptx:
        return child_main(*args.ptx)
    if args.hw_emit:
        return hw_emit(args.hw_emit)
    if args.hw_run:
        return hw_run(args.hw_run)
    if args.list:
        for name, it in ITEMS.items():
            print(f"{name:22s} {len(it.checks):3d} checks  {it.doc}")
        return 0
    names = args.items or list(ITEMS)
    unknown = [n for n in names if n not in ITEMS]
    if unknown:
        print("unknown item(s): " + ", ".join(unknown) + "; try --list", file=sys.stderr)
        return 2
    fails = 0
    for name in names:
        for c in ITEMS[name].checks:
            if args.chip and c.chip != args.chip:
                continue
            ok, msg = run_check(ITEMS[name], c, verbose=args.verbose)
            fails += 0 if ok else 1
            print(msg, flush=True)
    print(f"{fails} FAIL", flush=True)
    return min(fails, 125)


if __name__ == "__main__":
    sys.exit(main())

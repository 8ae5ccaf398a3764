"""Imports go downward only (docs: DESIGN.md, "Layers"): no import cycle between tilemlir's modules,
and the kernel language never reaches into lowering. Imports inside functions count too.

Variant registration is no exception: the variants import the registry to register, and the
registry never imports them (the pipeline calls tilemlir.lowering.cuda.load_variants()).
The root package counts as well: it re-exports tilemlir.compile & co. (lazily, naming their
modules in strings, which count as imports), so the compiler and everything it builds on may
not import it (the version lives in tilemlir.version).
"""

import ast
from pathlib import Path

import tilemlir

PACKAGE = Path(tilemlir.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, source: str) -> set[str]:
    """The tilemlir modules `source` (module `name`) imports, at any depth of its code."""
    package = name.split(".") if MODULES[name].name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            # `from pkg import mod` imports the submodule; `from mod import name` the module
            found.update(f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module
                         for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                node.value.startswith("tilemlir."):
            # a module named by a string is imported by name (importlib.import_module, the
            # root package's table of lazy names, `python -m`)
            found.add(node.value)
    return {m for m in found if m in MODULES and m != name}


def import_graph() -> dict[str, set[str]]:
    return {name: imports_of(name, path.read_text()) for name, path in MODULES.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while not component or component[-1] != v:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_kernel_language_does_not_import_lowering():
    reaching = {name: sorted(m for m in deps if m.startswith("tilemlir.lowering"))
                for name, deps in import_graph().items() if name.startswith("tilemlir.dsl")}
    assert {n: d for n, d in reaching.items() if d} == {}


# The layers every pass builds on, lowest first (DESIGN.md, "Layers"): each imports only the
# ones before it, never dispatch/, lowering/ or anything above.
FOUNDATION = ("tilemlir.layout", "tilemlir.ir", "tilemlir.analysis")


def _layer(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_the_foundation_layers_import_only_the_ones_below():
    upward = {}
    for name, deps in import_graph().items():
        if _layer(name) in FOUNDATION:
            allowed = FOUNDATION[:FOUNDATION.index(_layer(name)) + 1]
            bad = sorted(m for m in deps if _layer(m) not in allowed)
            if bad:
                upward[name] = bad
    assert upward == {}


def test_dispatch_reads_buffers_through_ir_not_lowering():
    """dispatch/ sits under lowering/, the registry included (it never imports the variants)."""
    above = ("tilemlir.lowering", "tilemlir.runtime", "tilemlir.dsl", "tilemlir.lang")
    reaching = {name: sorted(m for m in deps if m.startswith(above))
                for name, deps in import_graph().items() if name.startswith("tilemlir.dispatch")}
    assert {n: d for n, d in reaching.items() if d} == {}


def test_the_runtime_reads_the_kernel_abi_not_lowering():
    """What a kernel declares (tilemlir/ir/kernel_abi.py) is read by the runtime as by the
    language and the interpreter; the runtime compiles through the pipeline, never lowering."""
    reaching = {name: sorted(m for m in deps if m.startswith("tilemlir.lowering"))
                for name, deps in import_graph().items() if name.startswith("tilemlir.runtime")}
    assert {n: d for n, d in reaching.items() if d} == {}


def test_only_the_tools_read_pipeline_text():
    """tilemlir.compile hands objects to the passes (tilemlir/pipeline.py); pipeline text is
    tilemlir-opt's (and tilemlir-kernel's) input, read by tilemlir/tools/pass_pipeline.py."""
    readers = sorted(name for name, deps in import_graph().items()
                     if "tilemlir.tools.pass_pipeline" in deps
                     and not name.startswith("tilemlir.tools"))
    assert readers == []


def test_the_checks_build_on_the_foundation_and_targets_only():
    """checks/ (tile-verify, tile-check-async-proxy) runs before dispatch and reads tile IR: it
    sits on the foundation layers and target/, under dispatch/ and everything above it."""
    allowed = FOUNDATION + ("tilemlir.checks", "tilemlir.target")
    reaching = {name: sorted(m for m in deps if _layer(m) not in allowed)
                for name, deps in import_graph().items() if _layer(name) == "tilemlir.checks"}
    assert {n: d for n, d in reaching.items() if d} == {}


def test_shared_lowering_code_does_not_import_the_variants():
    """lowering/ (addresses, access plans, materialize) sits under lowering/cuda/, which uses it."""
    variants = "tilemlir.lowering.cuda"
    reaching = {name: sorted(m for m in deps if m.startswith(variants))
                for name, deps in import_graph().items()
                if name.startswith("tilemlir.lowering") and not name.startswith(variants)}
    assert {n: d for n, d in reaching.items() if d} == {}


def test_the_checks_see_function_level_and_relative_imports():
    source = "from . import values\nfrom .values import KernelError\n" \
             "def f():\n    from tilemlir.lowering import addresses\n    import tilemlir.runtime\n"
    assert imports_of("tilemlir.dsl.kernel", source) == {
        "tilemlir.dsl.values", "tilemlir.lowering.addresses", "tilemlir.runtime"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    lazy = '_LAZY = {"compile": "tilemlir.runtime.compiler"}\nNAME = "tilemlir"\n'
    assert imports_of("tilemlir.version", lazy) == {"tilemlir.runtime.compiler"}

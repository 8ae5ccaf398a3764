"""The IRDL file is the one definition of the tile dialect: the Python side must agree with it.

Op, operand and attribute names come from tilemlir/ir/dialect.py, which reads the IRDL file;
these tests find the places that still name ops, operands or attributes by hand (string
literals) and check each against the file, and check that the registry lowers every primitive.
"""

import ast
from pathlib import Path

import pytest

import tilemlir
from tilemlir.dispatch.registry import REGISTRY, variants_for
from tilemlir.ir.dialect import BUFFER_OPS, DISPATCHED, OPS, read_ops
from tilemlir.lowering.cuda import load_variants

load_variants()

PACKAGE = Path(tilemlir.__file__).resolve().parent
SOURCES = sorted(PACKAGE.rglob("*.py"))
OP_NAMES = {spec.full_name for spec in OPS.values()}
OPERAND_NAMES = {n for spec in DISPATCHED for n in spec.operands}
# "dispatch" is the discardable attribute that names a variant (see the IRDL file's header)
ATTRIBUTE_NAMES = {n for spec in DISPATCHED for n in spec.attributes} | {"dispatch"}


def _strings(node) -> list[str]:
    """The string constants of `node`: a literal, or a tuple / list / set of them."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _is_op_name(node) -> bool:
    """`x.name` or `name`, as code compares op names."""
    return (isinstance(node, ast.Attribute) and node.attr == "name") or \
        (isinstance(node, ast.Name) and node.id == "name")


def _op_name_literals(tree) -> list[tuple[int, str]]:
    """(line, literal) of every string used as an op name: the name passed to
    Operation.create, compared with an op's name, or listed in an *_OPS constant."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "create" and node.args:
            found += [(node.lineno, s) for s in _strings(node.args[0])]
        elif isinstance(node, ast.Compare) and _is_op_name(node.left):
            found += [(node.lineno, s) for c in node.comparators for s in _strings(c)]
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id.endswith("_OPS") for t in node.targets):
            found += [(node.lineno, s) for s in _strings(node.value)]
    return [(line, s) for line, s in found if s.startswith("tile.")]


def _context_lookups(tree, method: str) -> list[tuple[int, str]]:
    """(line, name) of every `ctx.<method>("name")` call: a variant reading its op."""
    return [(node.lineno, node.args[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == method and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "ctx" and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]


def _trees():
    return [(path.relative_to(PACKAGE.parent), ast.parse(path.read_text())) for path in SOURCES]


def test_every_op_name_written_in_python_is_an_op_of_the_irdl_file():
    unknown = [f"{path}:{line}: {name}" for path, tree in _trees()
               for line, name in _op_name_literals(tree) if name not in OP_NAMES]
    assert not unknown, "ops the IRDL file does not define:\n" + "\n".join(unknown)


@pytest.mark.parametrize("method, known", [("operand", OPERAND_NAMES), ("buffer", OPERAND_NAMES),
                                           ("attr", ATTRIBUTE_NAMES)])
def test_variants_read_only_operands_and_attributes_the_irdl_file_declares(method, known):
    unknown = [f"{path}:{line}: ctx.{method}({name!r})" for path, tree in _trees()
               for line, name in _context_lookups(tree, method) if name not in known]
    assert not unknown, "names no dispatched op of the IRDL file declares:\n" + "\n".join(unknown)


def test_every_primitive_of_the_irdl_file_has_a_variant_and_every_variant_a_primitive():
    without = [spec.full_name for spec in DISPATCHED if not variants_for(spec.name)]
    assert not without, f"primitives nothing can lower: {without}"
    dispatched = {spec.name for spec in DISPATCHED}
    strays = [f"{v.name} ({primitive})" for (primitive, _), vs in REGISTRY.variants.items()
              for v in vs if primitive not in dispatched]
    assert not strays, f"variants of primitives the IRDL file does not define: {strays}"


def test_the_buffer_ops_are_ops_of_the_irdl_file():
    assert set(BUFFER_OPS) <= set(OPS), set(BUFFER_OPS) - set(OPS)


def test_the_reader_takes_names_and_variadicity_from_irdl():
    specs = read_ops("""
      irdl.dialect @tile {
        irdl.operation @probe {
          %x = irdl.any
          %i = irdl.is index
          irdl.operands(dst: %x, indices: variadic %i, barrier: optional %x)
          irdl.attributes { "scope" = %x, "kind" = %x }
          irdl.results(out: %x)
        }
        irdl.operation @bare {
        }
      }""")
    probe = specs["probe"]
    assert (probe.operands, probe.variadicity) == (("dst", "indices", "barrier"),
                                                   ("single", "variadic", "optional"))
    assert (probe.attributes, probe.results, probe.optional) == (("scope", "kind"), ("out",),
                                                                 ("barrier",))
    assert list(specs) == ["probe", "bare"] and specs["bare"].operands == ()


def test_build_takes_operands_by_their_irdl_names():
    from mlir import ir
    from mlir.dialects import arith, llvm

    from tilemlir.ir.context import make_context
    from tilemlir.ir.dialect import build
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            barrier = llvm.mlir_zero(ir.Type.parse("!llvm.ptr<3>"))
            count = arith.constant(ir.IntegerType.get_signless(32), 1)
            op = build("mbarrier_init", {"count": count, "barrier": barrier})
            assert list(op.operands) == [barrier, count] and op.name == "tile.mbarrier_init"
            with pytest.raises(ValueError, match="declares no operand or attribute 'bar'"):
                build("mbarrier_init", {"bar": barrier, "count": count})
            with pytest.raises(ValueError, match="needs operand 'barrier'"):
                build("mbarrier_init", {"count": count})
            with pytest.raises(ValueError, match="no op 'mbarrier_int'"):
                build("mbarrier_int")

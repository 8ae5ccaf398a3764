"""Turns a Python kernel function into tile IR by interpreting its syntax tree.

The body is not run by Python: each statement is interpreted, with Python values (ints, layouts,
shapes) computed right away and device values (thread ids, loop counters, loads) becoming IR:

    for i in T.serial(n):      scf.for; scalars the body reassigns (phase ^= 1) are carried
    for s in T.unroll(8):      unrolled while building (s is a Python int)
    if <device condition>:     scf.if; scalars assigned in a branch are merged
    if <Python condition>:     decided while building
    x: T.int32 = 0             a device scalar of that type
    ring.wait(s, phase)        a @T.macro (module level) or a def inside the kernel: its body
                               is interpreted in place, as if written at the call

Every op gets the location of the Python line it comes from, and any error names that line.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import operator
import textwrap
from collections import ChainMap

from mlir import ir
from mlir.dialects import arith, scf

from tilemlir.dsl import builder as kernel_builder
from tilemlir.dsl.buffers import TileBuffer, row_major
from tilemlir.dsl.debug import device_fstring
from tilemlir.dsl.intrinsics import Buffer, ScalarType, SerialRange
from tilemlir.dsl.values import KernelError, Scalar, as_scalar, cast_to
from tilemlir.ir import emit
from tilemlir.ir.types import buffer_type
from tilemlir.layout import LayoutError

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Div: operator.truediv, ast.Mod: operator.mod,
           ast.BitXor: operator.xor, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
           ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.Pow: operator.pow,
           ast.MatMult: operator.matmul}
_COMPARE = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_,
            ast.IsNot: operator.is_not, ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b}


def _located(message: str) -> KernelError:
    """A KernelError whose message already names its source line (so outer statements pass it
    on as it is)."""
    err = KernelError(message)
    err.located = True
    return err


def _is_located(err: BaseException) -> bool:
    return getattr(err, "located", False)


def assigned_names(stmts) -> list[str]:
    """Names (re)bound anywhere in `stmts`, in first-seen order. Kept on the block's first
    statement: syntax trees live as long as their code object, and every loop and branch of a
    kernel asks once per build (it was half of a disk-cache hit's time on hgemm_v7)."""
    if not stmts:
        return []
    known = getattr(stmts[0], "_tilemlir_assigned", None)
    if known is not None and known[0] == len(stmts):
        return list(known[1])
    names = _assigned_names(stmts)
    stmts[0]._tilemlir_assigned = (len(stmts), tuple(names))
    return names


def _assigned_names(stmts) -> list[str]:
    names: list[str] = []

    def add(target):
        for node in ast.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id not in names:
                names.append(node.id)

    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Assign,)):
                for t in node.targets:
                    add(t)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                add(node.target)
            elif isinstance(node, ast.For):
                add(node.target)
    return names


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Frame:
    """The function whose statements are being interpreted: the kernel, a macro, or a function
    defined in one of them. Its scopes are live: while it calls into another frame they show
    its state at the call."""

    __slots__ = ("name", "filename", "line_offset", "globals", "scopes")

    def __init__(self, name: str, filename: str, line_offset: int, globals_, scopes: list):
        self.name = name
        self.filename = filename
        self.line_offset = line_offset
        self.globals = globals_
        self.scopes = scopes


def _function_globals(fn) -> ChainMap:
    """What a function's body sees besides its locals: its free variables, then its module."""
    closure = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:          # a free variable not bound yet
            pass
    return ChainMap(closure, fn.__globals__)


class Macro:
    """A device macro (`@T.macro`): a function whose body is interpreted where a kernel, or
    another macro, calls it, as if its statements were written there. Unlike a plain Python
    helper (which runs as Python while the kernel is built, so it cannot branch on a device
    value), a macro's `if` on a device value becomes `scf.if` and its `for ... in T.serial(n)`
    an `scf.for`, exactly as in a kernel body. It sees its own module's globals and free
    variables, takes named and default arguments, may call other macros, and returns a value
    with `return` outside device branches and loops. Its ops carry its own file and line (in
    diagnostics and in the PTX's `.loc`). On a class, `@T.macro` methods receive the instance
    as `self`, so small objects (a stage ring, a tile scheduler) can hold Python-level facts.

        @T.macro
        def release(empty, s, warp, lane):
            if warp == 0:
                if lane == 0:
                    T.ptx.mbarrier.arrive(empty.ptr_to([s]))
    """

    def __init__(self, fn):
        if isinstance(fn, Macro):
            fn = fn.fn
        if not inspect.isfunction(fn) or inspect.iscoroutinefunction(fn) \
                or inspect.isgeneratorfunction(fn):
            raise KernelError(f"@T.macro takes a plain `def` function, got {fn!r}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.signature = inspect.signature(fn)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)

    def __call__(self, *args, **kwargs):
        if not _interpreters:
            raise KernelError(f"{self.fn.__qualname__}() is a device macro (@T.macro): call it "
                              f"from a kernel body or from another macro")
        return _interpreters[-1].call_macro(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<tilemlir macro {self.fn.__qualname__}>"


def macro(fn) -> Macro:
    """Makes `fn` a device macro: see Macro."""
    return Macro(fn)


class _LocalFunction:
    """A function defined inside a kernel or a macro: calling it interprets its body in place
    (inlined), with its parameters bound in a scope of its own above the scopes of the frame
    that defined it, as they are at the call."""

    def __init__(self, interpreter: "Interpreter", node: ast.FunctionDef, frame: _Frame):
        self.interpreter = interpreter
        self.node = node
        self.frame = frame
        if node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            raise KernelError("functions in a kernel take plain positional parameters")

    def __call__(self, *args):
        it = self.interpreter
        if self in it.active_functions:
            raise KernelError(f"{self.node.name}() calls itself: functions in a kernel are "
                              f"inlined where called, so recursion would never end")
        params = [a.arg for a in self.node.args.args]
        defaults = [it.eval(d) for d in self.node.args.defaults]
        if not len(params) - len(defaults) <= len(args) <= len(params):
            raise KernelError(f"{self.node.name}() takes {len(params)} arguments, got {len(args)}")
        values = list(args) + defaults[len(defaults) - (len(params) - len(args)):]
        if self.frame not in it.frames:
            raise KernelError(f"{self.node.name}() was defined in {self.frame.name}(), which "
                              f"has returned: call it while {self.frame.name}() runs")
        scope = _Scope(False, function=True)
        scope.update(zip(params, values))
        with it.in_frame(self.frame, self.node.name):
            it.scopes.append(scope)
            it.active_functions.append(self)
            try:
                it.exec_block(self.node.body)
            except _Return as ret:
                return ret.value
            finally:
                it.active_functions.pop()
                it.scopes.pop()
        return None


class _Scope(dict):
    """Names bound in a block. device_boundary: the block is a device loop or branch (a Python
    value bound outside cannot be reassigned in it); function: the parameters of a function."""

    def __init__(self, device_boundary: bool, function: bool = False):
        super().__init__()
        self.device_boundary = device_boundary
        self.function = function


@functools.lru_cache(maxsize=256)
def _syntax_tree(code) -> tuple[ast.Module, str]:
    """A function's syntax tree and file, per code object (kernel factories make many closures
    over one code object, and reading the source is a measurable part of a cache hit)."""
    try:
        source = textwrap.dedent(inspect.getsource(code))
    except (OSError, TypeError) as err:
        raise KernelError(f"cannot read the source of {code.co_name}: {err}") from None
    return ast.parse(source), inspect.getsourcefile(code) or "<kernel>"


def _scf_yield(values: list[ir.Value]) -> None:
    # Operation.create: the generated scf.yield builder takes twice as long.
    ir.Operation.create("scf.yield", operands=values)


# The parameter space every chip and PTX version accepts (later PTX on sm_70+ allows 32 KB); a
# parameter (a pointer or a scalar, aligned) takes at most 8 bytes.
MAX_PARAM_BYTES = 4096
PARAM_BYTES = 8


_interpreters: list["Interpreter"] = []      # the kernels being built, innermost last


class _InFrame:
    """Interpreter.in_frame's context."""

    __slots__ = ("it", "frame", "callee", "saved", "caller")

    def __init__(self, it: "Interpreter", frame: _Frame, callee: str):
        self.it, self.frame, self.callee = it, frame, callee

    def __enter__(self) -> None:
        it = self.it
        self.caller = f"{it.filename}:{it.builder.line}"
        self.saved = it.frame
        it.frame = self.frame
        it.frames.append(self.frame)
        it.filename, it.line_offset = self.frame.filename, self.frame.line_offset
        it.globals, it.scopes = self.frame.globals, self.frame.scopes

    def __exit__(self, kind, err, tb) -> None:
        it = self.it
        it.frames.pop()
        it.frame = f = self.saved
        it.filename, it.line_offset, it.globals, it.scopes = \
            f.filename, f.line_offset, f.globals, f.scopes
        if isinstance(err, KernelError) and _is_located(err) and self.frame is not f:
            err.args = (f"{err}\n  in {self.callee}(), called at {self.caller}",)


class Interpreter:
    def __init__(self, fn):
        if not inspect.isfunction(fn):
            raise KernelError(f"{fn!r} is not a function: a kernel is a plain `def`")
        params = fn.__code__.co_argcount
        if params * PARAM_BYTES > MAX_PARAM_BYTES:
            raise KernelError(f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}: "
                              f"{fn.__name__} takes {params} parameters; a kernel's parameters "
                              f"must fit in {MAX_PARAM_BYTES} bytes (at most "
                              f"{MAX_PARAM_BYTES // PARAM_BYTES} of up to {PARAM_BYTES} bytes)")
        self.fn = fn
        self.tree, self.filename = _syntax_tree(fn.__code__)
        # The frame being interpreted (see in_frame); the kernel's to begin with.
        self.line_offset = fn.__code__.co_firstlineno - 1
        self.globals = dict(fn.__globals__)
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                self.globals[name] = cell.cell_contents
            except ValueError:
                pass
        self.scopes: list[_Scope] = [_Scope(False)]
        self.frame = _Frame(fn.__name__, self.filename, self.line_offset, self.globals,
                            self.scopes)
        self.frames: list[_Frame] = [self.frame]
        self.active_functions: list[_LocalFunction] = []
        self.active_macros: list[Macro] = []
        self.builder: kernel_builder.KernelBuilder | None = None

    # ------------------------------------------------------------------ entry
    def build(self) -> kernel_builder.KernelBuilder:
        fdef = self.tree.body[0]
        if not isinstance(fdef, (ast.FunctionDef,)):
            raise KernelError(f"{self.fn.__name__} is not a plain function")
        self.builder = b = kernel_builder.KernelBuilder(self.fn.__name__, self.filename)
        kernel_builder._current.append(b)
        _interpreters.append(self)
        try:
            with b.context, b.at(self._line(fdef), fdef.col_offset):
                params = self._parameters(fdef)
                dims, extents = self._run_time_dims(params, fdef)
                args = b.create_function([t for _, t, _ in params] + [emit.i32()] * len(dims),
                                         [n for n, _, _ in params] + dims)
                b.bind_dims({n: Scalar(a) for n, a in zip(dims, args[len(params):])},
                            [(n, len(params) + i) for i, n in enumerate(dims)], extents)
                with b.body_insertion_point():
                    for name in self._absent_parameters(fdef):
                        self.scopes[0][name] = None
                    for (name, _, annotation), arg in zip(params, args):
                        self.scopes[0][name] = self._bind_parameter(arg, annotation)
                    self.exec_block(fdef.body)
                b.finish()
        finally:
            _interpreters.pop()
            kernel_builder._current.pop()
        return b

    # ------------------------------------------------------------------ frames
    def in_frame(self, frame: _Frame, callee: str) -> "_InFrame":
        """A context interpreting statements of `frame` (a function's file, line numbers,
        globals and scopes); errors raised inside name `callee` and the line that called it."""
        return _InFrame(self, frame, callee)

    def call_macro(self, macro: Macro, args, kwargs):
        """Interprets `macro`'s body here, its parameters bound to the arguments."""
        name = macro.fn.__qualname__
        if macro in self.active_macros:
            raise KernelError(f"{name}() calls itself: a macro is inlined where it is called, "
                              f"so recursion would never end")
        try:
            bound = macro.signature.bind(*args, **kwargs)
        except TypeError as err:
            raise KernelError(f"{name}(): {err}") from None
        bound.apply_defaults()
        tree, filename = _syntax_tree(macro.fn.__code__)
        fdef = tree.body[0]
        scope = _Scope(False, function=True)
        scope.update(bound.arguments)
        frame = _Frame(name, filename, macro.fn.__code__.co_firstlineno - 1,
                       _function_globals(macro.fn), [scope])
        with self.in_frame(frame, name):
            self.active_macros.append(macro)
            try:
                self.exec_block(fdef.body)
            except _Return as ret:
                return ret.value
            finally:
                self.active_macros.pop()
        return None

    def _parameters(self, fdef):
        extra = fdef.args.vararg or fdef.args.kwarg or (fdef.args.kwonlyargs or [None])[0]
        if extra is not None or fdef.args.posonlyargs:
            self._fail(extra or fdef, "kernel parameters are plain named parameters, each with "
                                      "an annotation (*args, **kwargs, keyword-only and "
                                      "positional-only parameters have no kernel parameter)")
        params = []
        for arg in fdef.args.args:
            if arg.annotation is None:
                self._fail(arg, f"parameter '{arg.arg}' needs an annotation "
                                f"(T.Buffer(shape, dtype) or a scalar type such as T.int32)")
            # Python evaluated the annotations when it ran the `def` (names they use need not
            # be free variables of the body).
            annotation = self.fn.__annotations__.get(arg.arg)
            if annotation is None:
                continue                    # an absent parameter (see _absent_parameters)
            if isinstance(annotation, Buffer):
                params.append((arg.arg, emit.ptr(), annotation))
            elif isinstance(annotation, ScalarType):
                params.append((arg.arg, annotation.mlir(), annotation))
            else:
                self._fail(arg, f"parameter '{arg.arg}': unsupported annotation {annotation!r}")
        return params

    def _run_time_dims(self, params, fdef) -> tuple[list[str], list[tuple[int, str]]]:
        """The run-time dims (T.dynamic) that lead a buffer parameter's shape, in order of
        first use (each becomes a hidden i32 parameter after the declared ones), and the
        (parameter, leading extent as JSON) of every such buffer. A dim that only appears
        inside an expression cannot be read off an argument: it must lead some buffer."""
        named, extents, mentioned = [], [], set()
        for i, (name, _, annotation) in enumerate(params):
            leading = getattr(annotation, "leading", None)
            if leading is None:
                continue
            extents.append((i, leading.to_json()))
            mentioned |= leading.names()
            if leading.op == "dim" and leading.args[0] not in named:
                if leading.args[0] in [p for p, _, _ in params]:
                    self._fail(fdef, f"run-time dim {leading} has the name of a parameter")
                named.append(leading.args[0])
        unknown = sorted(mentioned - set(named))
        if unknown:
            self._fail(fdef, f"run-time dim(s) {', '.join(unknown)} lead no buffer parameter's "
                             f"shape, so no argument tells their value (make each the leading "
                             f"extent of one, e.g. T.Buffer(({unknown[0]}, K), ...))")
        return named, extents

    def _absent_parameters(self, fdef) -> list[str]:
        """Parameters annotated None: not kernel parameters, bound to None in the body. A
        factory uses them for buffers only some of its configurations need, e.g.
        `W: T.Buffer((R, C), "float32") if SPLIT_K > 1 else None`."""
        return [arg.arg for arg in fdef.args.args
                if arg.annotation is not None and self.fn.__annotations__.get(arg.arg) is None]

    def _bind_parameter(self, arg: ir.Value, annotation):
        if isinstance(annotation, ScalarType):
            return Scalar(arg)
        from tilemlir.dsl.values import mlir_type
        from tilemlir.ir.kernel_abi import DYNAMIC_EXTENT
        shape = annotation.shape if annotation.leading is None else \
            (DYNAMIC_EXTENT,) + tuple(annotation.shape[1:])
        t = buffer_type(shape, mlir_type(annotation.dtype), "global", row_major(shape))
        return TileBuffer(ir.Operation.create("tile.global", results=[t], operands=[arg]).result)

    # ------------------------------------------------------------------ errors
    def _line(self, node) -> int:
        return getattr(node, "lineno", 1) + self.line_offset

    def _fail(self, node, message: str):
        raise _located(f"{self.filename}:{self._line(node)}: {message}")

    def _exec_located(self, stmt) -> None:
        """Interprets `stmt` at its location; errors come out naming the line."""
        with self.builder.at(self._line(stmt), stmt.col_offset, self.filename):
            try:
                self.exec_stmt(stmt)
            except _Return:
                raise
            except (KernelError, LayoutError, TypeError, ValueError, AttributeError, IndexError,
                    KeyError, NameError, ZeroDivisionError) as err:
                if _is_located(err):
                    raise
                message = str(err) if isinstance(err, (KernelError, LayoutError)) else \
                    f"{type(err).__name__}: {err}"
                raise _located(f"{self.filename}:{self._line(stmt)}: {message}") from None

    # ------------------------------------------------------------------ scopes
    def lookup(self, name: str, node=None):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        if name in self.globals:
            return self.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise KernelError(f"name '{name}' is not defined")

    def _lookup_local(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def assign_name(self, name: str, value) -> None:
        crossed = False
        for scope in reversed(self.scopes):
            if name in scope:
                if crossed and not isinstance(scope[name], Scalar):
                    raise KernelError(f"'{name}' holds a Python value and is reassigned inside a "
                                      f"device loop or branch; give it a device type first "
                                      f"(e.g. {name}: T.int32 = ...) or use a new name")
                scope[name] = value
                return
            crossed |= scope.device_boundary
        self.scopes[-1][name] = value

    # ------------------------------------------------------------------ statements
    def exec_block(self, stmts) -> None:
        for stmt in stmts:
            self._exec_located(stmt)

    def exec_stmt(self, node) -> None:
        if isinstance(node, ast.Expr):
            self.eval(node.value)
        elif isinstance(node, ast.Assign):
            value = self.eval(node.value)
            for target in node.targets:
                self.assign(target, value)
        elif isinstance(node, ast.AugAssign):
            op = _BINOPS[type(node.op)]
            if isinstance(node.target, ast.Name):
                self.assign_name(node.target.id, op(self.lookup(node.target.id), self.eval(node.value)))
            else:
                current = self.eval(node.target)
                self.assign(node.target, op(current, self.eval(node.value)))
        elif isinstance(node, ast.AnnAssign):
            annotation = self.eval(node.annotation)
            if node.value is None:
                return
            value = self.eval(node.value)
            if isinstance(annotation, ScalarType):
                value = as_scalar(value, annotation.mlir())
            self.assign(node.target, value)
        elif isinstance(node, ast.For):
            self.exec_for(node)
        elif isinstance(node, ast.If):
            self.exec_if(node)
        elif isinstance(node, ast.Pass):
            pass
        elif isinstance(node, ast.Assert):
            if not self.eval(node.test):
                msg = self.eval(node.msg) if node.msg is not None else "assertion failed"
                raise KernelError(str(msg))
        elif isinstance(node, ast.FunctionDef):
            if node.decorator_list:
                raise KernelError("functions inside a kernel cannot be decorated")
            self.assign_name(node.name, _LocalFunction(self, node, self.frame))
        elif isinstance(node, ast.Return):
            self._check_return()
            raise _Return(self.eval(node.value) if node.value is not None else None)
        elif isinstance(node, ast.While):
            raise KernelError("while loops are not supported: use `for i in T.serial(n)`")
        else:
            raise KernelError(f"{type(node).__name__} statements are not supported in a kernel")

    def _check_return(self) -> None:
        """`return` leaves a function: only where no device branch or loop is open in it (the
        branch's or loop's region would be left without its terminator)."""
        for scope in reversed(self.scopes):
            if scope.function:
                return
            if scope.device_boundary:
                raise KernelError("return inside a device `if` or `for` (T.serial) is not "
                                  "supported: assign the result to a device variable and "
                                  "return it at the end")
        raise KernelError("return is not supported in a kernel body")

    def assign(self, target, value) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value) if not isinstance(value, Scalar) else None
            if values is None or len(values) != len(target.elts):
                raise KernelError(f"cannot unpack into {len(target.elts)} names")
            for t, v in zip(target.elts, values):
                self.assign(t, v)
        elif isinstance(target, ast.Subscript):
            obj = self.eval(target.value)
            obj[self.eval(target.slice)] = value
        else:
            raise KernelError(f"cannot assign to {type(target).__name__}")

    def exec_for(self, node: ast.For) -> None:
        if node.orelse:
            raise KernelError("for ... else is not supported")
        iterable = self.eval(node.iter)
        if isinstance(iterable, SerialRange):
            return self._device_for(node, iterable)
        if isinstance(iterable, Scalar):
            raise KernelError("iterate over T.serial(n) or T.unroll(n), not a device value")
        for value in iterable:
            self.assign(node.target, value)
            self.exec_block(node.body)

    def _carried(self, stmts) -> list[str]:
        return [n for n in assigned_names(stmts) if isinstance(self._lookup_local(n), Scalar)]

    def _device_for(self, node: ast.For, rng: SerialRange) -> None:
        if not isinstance(node.target, ast.Name):
            raise KernelError("a device loop binds one name: for i in T.serial(n)")
        carried = [n for n in self._carried(node.body) if n != node.target.id]
        lb, ub, step = (as_scalar(x, emit.index()).value for x in (rng.start, rng.stop, rng.step))
        inits = [self.lookup(n) for n in carried]
        loop = scf.ForOp(lb, ub, step, [v.value for v in inits])
        with ir.InsertionPoint(loop.body):
            scope = _Scope(True)
            scope[node.target.id] = Scalar(loop.induction_variable)
            for name, arg in zip(carried, loop.inner_iter_args):
                scope[name] = Scalar(arg)
            self.scopes.append(scope)
            try:
                self.exec_block(node.body)
                yields = [self._like(self.scopes[-1][n], init) for n, init in zip(carried, inits)]
            finally:
                self.scopes.pop()
            _scf_yield(yields)
        for name, result in zip(carried, loop.results):
            self.assign_name(name, Scalar(result))

    def _like(self, value, init: Scalar) -> ir.Value:
        """`value` converted to the type of the loop-carried / merged `init`."""
        if isinstance(value, Scalar):
            return cast_to(value, init.type).value
        return as_scalar(value, init.type).value

    def exec_if(self, node: ast.If) -> None:
        cond = self.eval(node.test)
        if not isinstance(cond, Scalar):
            self.exec_block(node.body if cond else node.orelse)
            return
        if not (isinstance(cond.type, ir.IntegerType) and ir.IntegerType(cond.type).width == 1):
            cond = cond != 0
        carried = self._carried(node.body + node.orelse)
        inits = [self.lookup(n) for n in carried]
        has_else = bool(carried or node.orelse)
        # Operation.create: scf.IfOp's builder takes twice as long, and kernels branch a lot.
        branch = ir.Operation.create("scf.if", results=[v.type for v in inits],
                                     operands=[cond.value], regions=2)
        arms = [(branch.regions[0].blocks.append(), node.body)]
        if has_else:
            arms.append((branch.regions[1].blocks.append(), node.orelse))
        for block, stmts in arms:
            with ir.InsertionPoint(block):
                scope = _Scope(True)
                for name, init in zip(carried, inits):
                    scope[name] = init
                self.scopes.append(scope)
                try:
                    self.exec_block(stmts)
                    yields = [self._like(self.scopes[-1][n], i) for n, i in zip(carried, inits)]
                finally:
                    self.scopes.pop()
                _scf_yield(yields)
        for name, result in zip(carried, branch.results):
            self.assign_name(name, Scalar(result))

    # ------------------------------------------------------------------ expressions
    def eval(self, node):
        method = _EVALUATORS.get(type(node))
        if method is None:
            raise KernelError(f"{type(node).__name__} expressions are not supported in a kernel")
        return method(self, node)

    def _eval_Constant(self, node):
        return node.value

    def _eval_Name(self, node):
        return self.lookup(node.id, node)

    def _eval_Attribute(self, node):
        return getattr(self.eval(node.value), node.attr)

    def _eval_Call(self, node):
        fn = self.eval(node.func)
        args = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.eval(a.value))
            else:
                args.append(self.eval(a))
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                kwargs.update(self.eval(kw.value))
            else:
                kwargs[kw.arg] = self.eval(kw.value)
        return fn(*args, **kwargs)

    def _eval_BinOp(self, node):
        return _BINOPS[type(node.op)](self.eval(node.left), self.eval(node.right))

    def _eval_UnaryOp(self, node):
        v = self.eval(node.operand)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Not):
            if isinstance(v, Scalar):
                return Scalar(arith.xori(as_scalar(v, emit.i1()).value, emit.const(1, emit.i1())))
            return not v
        return ~v

    def _eval_Compare(self, node):
        left = self.eval(node.left)
        result = None
        for op, comparator in zip(node.ops, node.comparators):
            right = self.eval(comparator)
            r = _COMPARE[type(op)](left, right)
            result = r if result is None else self._and(result, r)
            left = right
        return result

    def _and(self, a, b):
        if isinstance(a, Scalar) or isinstance(b, Scalar):
            return Scalar(arith.andi(as_scalar(a, emit.i1()).value, as_scalar(b, emit.i1()).value))
        return a and b

    def _eval_BoolOp(self, node):
        values = [self.eval(v) for v in node.values]
        if not any(isinstance(v, Scalar) for v in values):
            result = values[0]
            for v in values[1:]:
                result = (result and v) if isinstance(node.op, ast.And) else (result or v)
            return result
        combine = arith.andi if isinstance(node.op, ast.And) else arith.ori
        acc = as_scalar(values[0], emit.i1()).value
        for v in values[1:]:
            acc = combine(acc, as_scalar(v, emit.i1()).value)
        return Scalar(acc)

    def _eval_IfExp(self, node):
        cond = self.eval(node.test)
        if not isinstance(cond, Scalar):
            return self.eval(node.body if cond else node.orelse)
        a, b = self.eval(node.body), self.eval(node.orelse)
        from tilemlir.dsl.values import coerce
        a, b = coerce(as_scalar(a) if not isinstance(a, Scalar) else a, b)
        return Scalar(arith.select(as_scalar(cond, emit.i1()).value, a.value, b.value))

    def _eval_Subscript(self, node):
        return self.eval(node.value)[self.eval(node.slice)]

    def _eval_Slice(self, node):
        return slice(*(self.eval(x) if x is not None else None
                       for x in (node.lower, node.upper, node.step)))

    def _eval_Tuple(self, node):
        return tuple(self.eval(e) for e in node.elts)

    def _eval_List(self, node):
        return [self.eval(e) for e in node.elts]

    def _eval_Dict(self, node):
        return {self.eval(k): self.eval(v) for k, v in zip(node.keys, node.values)}

    def _eval_JoinedStr(self, node):
        """An f-string: text now, or a DeviceFormat for T.print when it holds device values."""
        pieces = []
        for v in node.values:
            if not isinstance(v, ast.FormattedValue):
                pieces.append(v.value)
                continue
            value = self.eval(v.value)
            if v.conversion in (ord("r"), ord("s"), ord("a")) and not isinstance(value, Scalar):
                value = {"r": repr, "s": str, "a": ascii}[chr(v.conversion)](value)
            spec = self.eval(v.format_spec) if v.format_spec is not None else ""
            pieces.append((value, spec))
        return device_fstring(pieces)

    def _eval_ListComp(self, node):
        if len(node.generators) != 1 or node.generators[0].ifs:
            raise KernelError("only simple list comprehensions are supported")
        gen = node.generators[0]
        out = []
        self.scopes.append(_Scope(False))
        try:
            for value in self.eval(gen.iter):
                self.assign(gen.target, value)
                out.append(self.eval(node.elt))
        finally:
            self.scopes.pop()
        return out


# Interpreter._eval_<Node> per syntax node class, looked up once rather than by name per node.
_EVALUATORS = {getattr(ast, name.removeprefix("_eval_")): method
               for name, method in vars(Interpreter).items() if name.startswith("_eval_")}

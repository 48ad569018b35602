"""Tracing: what a tf.function does with Python values (lists, print, numpy, Python numbers)."""

from __future__ import annotations

import ast

from tfgen.lint.context import FileContext, assignment_index, const, latest_value, names_of, top_terms
from tfgen.lint.registry import hit, rule
from tfgen.lint.steps import call_trains, named_training

NOT_TENSOR_MODULES = {
    "config",
    "distribute",
    "data",
    "io",
    "saved_model",
    "train",
    "summary",
    "debugging",
    "random",
    "experimental",
    "compat",
    "sysconfig",
    "test",
    "errors",
    "dtypes",
    "version",
}
NOT_TENSOR_FUNCTIONS = ("executing_eagerly", "function", "GradientTape", "Variable", "device", "name_scope", "constant")


def _loop_body(ctx: FileContext, loop) -> list:
    return [n for stmt in loop.body for n in [stmt, *ctx.local(stmt)]]


def _reset_in_a_loop(ctx: FileContext, loop, name: str) -> bool:
    """Whether the list `name` is assigned afresh inside `loop` or a loop around it (once per epoch): it is
    bounded, not a growing history."""
    node = loop
    while node is not None:
        if isinstance(node, (ast.For, ast.While)) and name in ctx.cached(
            ("assigned-names", id(node)), lambda node=node: _assigned_names(ctx, node)
        ):
            return True
        node = ctx.innermost_loop(node)
    return False


def _assigned_names(ctx: FileContext, loop) -> set[str]:
    return {name for n in ctx.walk(loop) if isinstance(n, ast.Assign) for t in n.targets for name in names_of(t)}


def _not_training(ctx: FileContext, call: ast.Call) -> bool:
    """A visible step that applies no gradient and is not named as a training step (e.g. one that computes
    the gradients an algorithm collects)."""
    step = call.args[0] if ctx.is_strategy_run(call) and call.args else call.func
    return call_trains(ctx, call) is False and not named_training(step)


def _appended_step_result(ctx: FileContext, loop, assigned: dict, call) -> bool:
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "append"
        and len(call.args) == 1
    ):
        return False
    if ctx.innermost_loop(call) is not loop:
        return False  # reported for the innermost loop only
    value = call.args[0]
    if isinstance(value, ast.Name):
        value = latest_value(assigned, value.id, call.lineno, inclusive=True)
    if isinstance(value, ast.Subscript):
        value = value.value
    if not (isinstance(value, ast.Call) and ctx.is_step_call(value)) or _not_training(ctx, value):
        return False
    if any(isinstance(n, (ast.For, ast.While)) and n is not loop for n in ctx.walk(loop)):
        return False  # an epoch loop around the step loop: one value an epoch
    receiver = call.func.value
    return not (isinstance(receiver, ast.Name) and _reset_in_a_loop(ctx, loop, receiver.id))


@rule(
    code="TFG001",
    name="tensor-accumulated-in-python-list",
    message="tensor returned by a tf.function/train step kept in a Python container across iterations: "
    "memory grows every step; aggregate in the graph or a keras metric, or keep `.numpy()`/float values",
    finds="a tensor returned by a `tf.function`/train step appended to a Python list in a loop",
    why="memory grows every step",
    instead="aggregate in the graph or a Keras metric; keep `.numpy()`/`float()` values",
)
def tensor_accumulated_in_python_list(ctx: FileContext):
    for loop in ctx.nodes:
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        body = _loop_body(ctx, loop)
        assigned = assignment_index(body, tuples=True)
        for call in body:
            if _appended_step_result(ctx, loop, assigned, call):
                yield hit(call)


@rule(
    code="TFG002",
    name="print-in-tf-function",
    message="`print` inside a tf.function runs once, at trace time; use `tf.print` (or tf.summary to keep values)",
    finds="`print` inside a `tf.function` (or a Keras `train_step`, which `fit` traces)",
    why="runs once, at trace time",
    instead="`tf.print` (`tf.summary` to keep values)",
)
def print_in_tf_function(ctx: FileContext):
    for call in ctx.calls:
        is_print = isinstance(call.func, ast.Name) and call.func.id == "print"
        if is_print and ctx.in_traced(call) and not _announces_tracing(call):
            yield hit(call)


def _announces_tracing(call: ast.Call) -> bool:
    """`print("Tracing with", x)`: the idiom that shows when a function is traced, meant to run then."""
    texts = [const(a) for a in call.args if isinstance(const(a), str)]
    return any("trac" in text.lower() for text in texts)


def _tensorish_call(ctx: FileContext, expr: ast.Call) -> bool:
    parts = (ctx.func_name(expr) or "").split(".")
    if parts[0] == "tf" and len(parts) >= 2 and parts[-1][:1].islower() and parts[1] not in NOT_TENSOR_MODULES:
        return parts[-1] not in NOT_TENSOR_FUNCTIONS
    if isinstance(expr.func, ast.Attribute) and expr.func.attr == "gradient":
        return True
    last = parts[-1].lower()
    return "model" in last or "loss" in last  # a model or a loss applied to tensors


def _tensorish(ctx: FileContext, expr, scope, depth=0) -> bool:
    if depth > 3:
        return False
    if isinstance(expr, ast.Subscript):
        return _tensorish(ctx, expr.value, scope, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _tensorish(ctx, expr.left, scope, depth + 1) or _tensorish(ctx, expr.right, scope, depth + 1)
    if isinstance(expr, ast.Name) and scope is not None:
        value = ctx.last_assignment(scope, expr.id, expr.lineno + 1)
        return value is not None and value is not expr and _tensorish(ctx, value, scope, depth + 1)
    if isinstance(expr, ast.Call):
        return _tensorish_call(ctx, expr)
    return False


def _conversion(ctx: FileContext, call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute) and call.func.attr == "numpy" and not call.args:
        return ".numpy()"
    if (
        isinstance(call.func, ast.Name)
        and call.func.id in ("float", "int")
        and len(call.args) == 1
        and _tensorish(ctx, call.args[0], ctx.enclosing_function(call))
    ):
        return f"{call.func.id}()"
    return None


@rule(
    code="TFG003",
    name="numpy-in-graph-or-tape",
    message="`{what}` inside {where} {why}; keep the value a tensor (tf ops), convert outside the step",
    finds="`.numpy()`, `float()`/`int()` of a tensor inside a `tf.function` (or a Keras `train_step`) or a "
    "`GradientTape` block",
    why="fails on symbolic tensors; the tape loses the path, gradients are `None`",
    instead="keep tensors; convert outside the step",
)
def numpy_in_graph_or_tape(ctx: FileContext):
    for call in ctx.calls:
        what = _conversion(ctx, call)
        if what is None:
            continue
        if ctx.in_traced(call):
            yield hit(
                call,
                what=what,
                where="a tf.function",
                why="cannot convert a symbolic tensor (it fails or freezes one traced value)",
            )
        elif ctx.in_tape(call) and not _only_logged(ctx, call):
            yield hit(
                call,
                what=what,
                where="a GradientTape block",
                why="leaves the graph: the tape cannot follow it and gradients become None",
            )


def _only_logged(ctx: FileContext, call: ast.Call) -> bool:
    """A conversion handed straight to `print`, or appended to a list the tape block never reads: a record of
    the value, off the loss's path."""
    parent = ctx.parent.get(call)
    if not (isinstance(parent, ast.Call) and call in parent.args):
        return False
    func = parent.func
    if isinstance(func, ast.Name) and func.id == "print":
        return True
    if not (isinstance(func, ast.Attribute) and func.attr in ("append", "extend")):
        return False
    text = ast.unparse(func.value)
    reads = [n for n in ctx.walk(ctx.tape_of(call)) if isinstance(n, type(func.value)) and n is not func.value]
    return not any(ast.unparse(n) == text for n in reads)


def _loop_counters(loop) -> set[str]:
    source = loop.iter
    if not (isinstance(source, ast.Call) and isinstance(source.func, ast.Name)):
        return set()
    if source.func.id == "range" and isinstance(loop.target, ast.Name):
        return {loop.target.id}
    if (
        source.func.id == "enumerate"
        and isinstance(loop.target, ast.Tuple)
        and loop.target.elts
        and isinstance(loop.target.elts[0], ast.Name)
    ):
        return {loop.target.elts[0].id}
    return set()


def _python_number_of(expr, counters) -> str | None:
    if isinstance(expr, ast.Name) and expr.id in counters:
        return expr.id
    if isinstance(expr, ast.BinOp):
        terms = top_terms(expr)
        if all(isinstance(t, (ast.Name, ast.Constant)) for t in terms):
            hits = [t.id for t in terms if isinstance(t, ast.Name) and t.id in counters]
            if hits:
                return hits[0]
    return None


@rule(
    code="TFG016",
    name="python-number-to-tf-function",
    message="Python number `{name}` changes every call of tf.function `{fn}`: it retraces each time; pass "
    "`tf.constant({name})` (or a tf.Variable)",
    finds="a `for i in range(...)` counter passed straight to a `tf.function`",
    why="a new Python value retraces every call",
    instead="pass `tf.constant(i)`",
)
def python_number_to_tf_function(ctx: FileContext):
    for loop in ctx.nodes:
        if not isinstance(loop, ast.For):
            continue
        counters = _loop_counters(loop)
        if not counters or ctx.in_traced(loop):
            continue  # a Python loop inside a tf.function is unrolled, not a retrace per call
        for call in _loop_body(ctx, loop):
            fn = ctx.is_tf_function_call(call) if isinstance(call, ast.Call) else None
            if not fn:
                continue
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                name = _python_number_of(arg, counters)
                if name:
                    yield hit(arg, name=name, fn=fn)

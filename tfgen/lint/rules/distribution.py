"""tf.distribute: what must be created in `strategy.scope()`, and how losses and updates combine."""

from __future__ import annotations

import ast

from tfgen.lint.context import (
    FUNCS,
    FileContext,
    assigned_name,
    const,
    dotted,
    is_method_call,
    is_model_losses,
    kw,
    top_terms,
)
from tfgen.lint.keras_steps import MODELS
from tfgen.lint.registry import hit, rule

MEAN_REDUCTIONS = ("auto", "sum_over_batch_size", "mean")


def is_strategy_ctor(ctx: FileContext, call) -> bool:
    name = ctx.func_name(call) or ""
    return name.startswith("tf.distribute.") and name.endswith("Strategy") and name.split(".")[-1] != "Strategy"


def _is_optimizer_ctor(name: str) -> bool:
    last = name.split(".")[-1]
    return (
        name.startswith(("keras.optimizers.", "keras.mixed_precision."))
        and last[:1].isupper()
        and "schedules" not in name
        and (name.startswith("keras.optimizers.") or last == "LossScaleOptimizer")
    )


def _creation_direct(ctx: FileContext, call) -> str | None:
    name = ctx.func_name(call) or ""
    if name in MODELS or name == "keras.models.load_model" or name.startswith("keras.applications."):
        return "a model"
    if _is_optimizer_ctor(name):
        return "an optimizer"
    if name.startswith("keras.metrics.") and name.split(".")[-1][:1].isupper():
        return "a metric"
    return None


def _builds_model(ctx: FileContext, function) -> bool:
    """Whether a local function's own code calls a Keras model constructor."""
    return any(
        isinstance(inner, ast.Call)
        and ((ctx.func_name(inner) or "") in MODELS or (ctx.func_name(inner) or "").startswith("keras.applications."))
        for inner in ctx.local(function)
    )


def _creation(ctx: FileContext, call) -> str | None:
    """'a model', 'an optimizer' or 'a metric' when `call` creates one (visibly)."""
    made = _creation_direct(ctx, call)
    if made or not isinstance(call.func, ast.Name):
        return made
    if call.func.id in ctx.model_classes:
        return "a model"
    for function in ctx.defs.get(call.func.id, []):
        if ctx.cached(("builds-model", id(function)), lambda f=function: _builds_model(ctx, f)):
            return "a model"
    return None


def _nested_creation(ctx: FileContext, call) -> bool:
    """An optimizer built inside another creation call (e.g. LossScaleOptimizer(Adam())): report the outer."""
    parent = ctx.parent.get(call)
    while isinstance(parent, (ast.keyword, ast.Call, ast.List, ast.Tuple)):
        if isinstance(parent, ast.Call) and _creation(ctx, parent):
            return True
        parent = ctx.parent.get(parent)
    return False


def in_scope_block(ctx: FileContext, node) -> bool:
    node = ctx.parent.get(node)
    while node is not None and not isinstance(node, FUNCS):
        if isinstance(node, (ast.With, ast.AsyncWith)) and any(
            is_method_call(item.context_expr, "scope") for item in node.items
        ):
            return True
        node = ctx.parent.get(node)
    return False


def _own_names(ctx: FileContext, function) -> set[str]:
    """The names `function` binds itself (parameters and local assignments)."""
    arguments = function.args
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    names.update(n.id for n in ctx.local(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return names


def _dotted_reads(ctx: FileContext, node) -> set[str]:
    return {name for n in ctx.walk(node) if isinstance(n, (ast.Name, ast.Attribute)) for name in [dotted(n)] if name}


def _distributed_reads(ctx: FileContext) -> set[str]:
    """Names read in the functions run by `strategy.run` (or called from one), or passed to `strategy.run`."""
    reads = set()
    for function in ctx.distributed:
        own = _own_names(ctx, function)
        reads.update(name for name in _dotted_reads(ctx, function) if "." in name or name not in own)
    for call in ctx.calls:
        if ctx.is_strategy_run(call):
            for argument in [*call.args[1:], *call.keywords]:
                reads.update(_dotted_reads(ctx, argument))
    return reads


def used_in_distributed_step(ctx: FileContext, name: str) -> bool:
    return name in ctx.cached("distributed-reads", lambda: _distributed_reads(ctx))


def _last_assignment_lines(ctx: FileContext, scope) -> dict[str, int]:
    lines: dict[str, int] = {}
    for node in ctx.local(scope):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                name = dotted(target)
                if name:
                    lines[name] = max(lines.get(name, 0), node.lineno)
    return lines


def _reassigned_later(ctx: FileContext, scope, name: str, line: int) -> bool:
    """Whether `scope` assigns `name` again after `line` (the step may see that object instead)."""
    lines = ctx.cached(("assignment-lines", id(scope)), lambda: _last_assignment_lines(ctx, scope))
    return lines.get(name, 0) > line


def _first_strategy(ctx: FileContext, scope):
    assigns = sorted((n for n in ctx.local(scope) if isinstance(n, ast.Assign)), key=lambda n: n.lineno)
    for node in assigns:
        if (
            isinstance(node.value, ast.Call)
            and is_strategy_ctor(ctx, node.value)
            and isinstance(node.targets[0], ast.Name)
        ):
            return node
    return None


@rule(
    code="TFG007",
    name="created-outside-strategy-scope",
    message="{what} created outside `{strategy}.scope()` and used in a distributed step: its variables are not "
    "mirrored across replicas; create it inside `with {strategy}.scope():`",
    finds="a model, optimizer or metric created outside `strategy.scope()` (after the strategy, same scope) "
    "and used in a function run by `strategy.run`",
    why="its variables are not mirrored",
    instead="create it inside `with strategy.scope():`",
)
def created_outside_strategy_scope(ctx: FileContext):
    for scope in ctx.scopes():
        strategy = _first_strategy(ctx, scope)
        if strategy is None:
            continue
        for call in ctx.local(scope):
            if not isinstance(call, ast.Call) or call.lineno <= strategy.lineno:
                continue
            what = _creation(ctx, call)
            if not what or in_scope_block(ctx, call) or _nested_creation(ctx, call):
                continue
            name = assigned_name(ctx, call)
            if name and not _reassigned_later(ctx, scope, name, call.lineno) and used_in_distributed_step(ctx, name):
                yield hit(call, what=what[0].upper() + what[1:], strategy=strategy.targets[0].id)


def _optimizers(ctx: FileContext):
    """(name, creation call) of each Keras 3 optimizer assigned to a name or an attribute.

    Legacy (Keras 2) optimizers create their slots in the cross-replica context by themselves."""
    for call in ctx.calls:
        name = ctx.func_name(call) or ""
        if _is_optimizer_ctor(name) and ".legacy." not in name and not _nested_creation(ctx, call):
            name = assigned_name(ctx, call)
            if name:
                yield name, call


def _method_call_index(ctx: FileContext) -> set:
    """{(receiver, method, inside a distributed step)} of every `receiver.method(...)` call."""
    index = set()
    for call in ctx.calls:
        if isinstance(call.func, ast.Attribute):
            receiver = dotted(call.func.value)
            if receiver:
                index.add((receiver, call.func.attr, ctx.enclosing_function(call) in ctx.distributed))
    return index


def _method_calls_on(ctx: FileContext, name: str, methods: tuple, inside: bool) -> bool:
    index = ctx.cached("method-calls", lambda: _method_call_index(ctx))
    return any((name, method, inside) in index for method in methods)


@rule(
    code="TFG018",
    name="optimizer-built-in-distributed-step",
    message="optimizer `{name}` is first built inside a distributed step (its slots are created lazily by "
    "`{name}.apply_gradients` in the function run by `strategy.run`), which fails on Keras 3 with more "
    "than one replica (`InvalidArgumentError`); call `{name}.build(model.trainable_variables)` inside "
    "the strategy scope, before the training loop",
    finds="an optimizer never `build`-ed before its first `apply_gradients`/`apply` inside `strategy.run`",
    why="its slot variables are created inside the replica context: Keras 3 fails with more than one replica",
    instead="`optimizer.build(model.trainable_variables)` inside `strategy.scope()`",
)
def optimizer_built_in_distributed_step(ctx: FileContext):
    for name, call in _optimizers(ctx):
        if not _method_calls_on(ctx, name, ("apply_gradients", "apply"), inside=True):
            continue
        if _method_calls_on(ctx, name, ("build",), inside=False):
            continue
        yield hit(call, name=name)


def _mean_reduction(call: ast.Call) -> bool:
    """Whether a Keras loss constructor keeps a mean reduction (the default, or one named explicitly)."""
    reduction = kw(call, "reduction")
    if reduction is None:
        return True
    value = reduction.value
    text = str(const(value) if isinstance(value, ast.Constant) else dotted(value) or "")
    return text.split(".")[-1].lower() in MEAN_REDUCTIONS  # None, "none", "sum" or unknown: not a mean


def _default_reduction_losses(ctx: FileContext) -> set[str]:
    names = set()
    for node in ctx.nodes:
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        name = ctx.func_name(node.value) or ""
        if name.startswith("keras.losses.") and name.split(".")[-1][:1].isupper() and _mean_reduction(node.value):
            names.update(key for key in (dotted(t) for t in node.targets) if key)
    return names


def _values_by_name(ctx: FileContext, function) -> dict[str, list]:
    """{name: values assigned or added to it} in `function` (plain and augmented assignments)."""
    values: dict[str, list] = {}
    for node in ctx.local(function):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        )
        for target in targets:
            if isinstance(target, ast.Name):
                values.setdefault(target.id, []).append(node.value)
    return values


def _assigned_values(ctx: FileContext, function, name: str) -> list:
    index = ctx.cached(("values", id(function)), lambda: _values_by_name(ctx, function))
    return index.get(name, [])


def _loss_calls(ctx: FileContext, function) -> list:
    """The calls that make up the loss whose gradient `function` takes (following local assignments)."""
    queue = [c.args[0] for c in ctx.local(function) if is_method_call(c, "gradient") and c.args]
    seen_names, calls = set(), []
    while queue:
        for term in top_terms(queue.pop()):
            if isinstance(term, ast.Name) and term.id not in seen_names:
                seen_names.add(term.id)
                queue.extend(_assigned_values(ctx, function, term.id))
            elif isinstance(term, ast.Call):
                calls.append(term)
    return calls


def _reduce_mean_over_batch(ctx: FileContext, call) -> bool:
    if (ctx.func_name(call) or "") not in ("tf.reduce_mean", "tf.math.reduce_mean", "keras.ops.mean"):
        return False
    axis = kw(call, "axis")
    axis_value = axis.value if axis else (call.args[1] if len(call.args) > 1 else None)
    return axis_value is None or (isinstance(axis_value, ast.Constant) and axis_value.value in (0, None))


def _mean_calls(ctx: FileContext, call, default_losses, depth=0) -> list:
    if _reduce_mean_over_batch(ctx, call):
        return [(call, "`tf.reduce_mean` of the loss")]
    if (ctx.func_name(call) or "") in ("tf.reduce_mean", "tf.math.reduce_mean", "keras.ops.mean"):
        return []
    if dotted(call.func) in default_losses:
        return [(call, f"Keras loss `{dotted(call.func)}` with its default reduction (a mean)")]
    if depth > 0 or not isinstance(call.func, ast.Name):
        return []
    results = []
    for function in ctx.defs.get(call.func.id, []):
        for term in ctx.cached(("returned-calls", id(function)), lambda f=function: _returned_calls(ctx, f)):
            results.extend(_mean_calls(ctx, term, default_losses, depth + 1))
    return results


def _returned_calls(ctx: FileContext, function) -> list:
    return [
        term
        for node in ctx.local(function)
        if isinstance(node, ast.Return) and node.value is not None
        for term in top_terms(node.value)
        if isinstance(term, ast.Call)
    ]


@rule(
    code="TFG008",
    name="per-replica-mean-loss",
    message="{what} inside the function run by `strategy.run` averages over this replica's batch only, so "
    "gradients scale with the replica count; use a per-example loss (reduction=None) and "
    "`tf.nn.compute_average_loss(..., global_batch_size=...)`",
    finds="`tf.reduce_mean` or a Keras loss with its default reduction as the loss in a `strategy.run` function",
    why="a per-replica mean: gradients scale with the replica count",
    instead="`reduction=None` and `tf.nn.compute_average_loss(..., global_batch_size=...)`",
)
def per_replica_mean_loss(ctx: FileContext):
    default_losses = _default_reduction_losses(ctx)
    for function in ctx.run_functions:
        for term in _loss_calls(ctx, function):
            for call, what in _mean_calls(ctx, term, default_losses):
                yield hit(call, what=what)


def _is_scaling(ctx: FileContext, node) -> bool:
    return isinstance(node, ast.Call) and (ctx.func_name(node) or "").endswith("scale_regularization_loss")


def _loads_by_name(ctx: FileContext, function) -> dict[str, list]:
    loads: dict[str, list] = {}
    for node in ctx.local(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.setdefault(node.id, []).append(node)
    return loads


def _added_unscaled(ctx: FileContext, function, name, after_line) -> bool:
    loads = ctx.cached(("loads", id(function)), lambda: _loads_by_name(ctx, function))
    for use in loads.get(name, []):
        if use.lineno <= after_line:
            continue
        parent = ctx.parent.get(use)
        probe = parent
        while probe is not None and not isinstance(probe, ast.stmt):
            if _is_scaling(ctx, probe):
                return False
            probe = ctx.parent.get(probe)
        if isinstance(parent, (ast.BinOp, ast.AugAssign)) and isinstance(parent.op, ast.Add):
            return True
    return False


def _losses_added_unscaled(ctx: FileContext, function, node) -> bool:
    """Whether this `model.losses` read ends up added to a loss without scale_regularization_loss."""
    added, parent = False, ctx.parent.get(node)
    while parent is not None and not isinstance(parent, ast.stmt):
        if _is_scaling(ctx, parent):
            return False
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
            added = True
        parent = ctx.parent.get(parent)
    if isinstance(parent, ast.AugAssign) and isinstance(parent.op, ast.Add):
        return True
    if (
        not added
        and isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
    ):
        return _added_unscaled(ctx, function, parent.targets[0].id, parent.lineno)
    return added


@rule(
    code="TFG009",
    name="unscaled-regularization-loss",
    message="regularization losses added inside `strategy.run` are summed once per replica; add "
    "`tf.nn.scale_regularization_loss(tf.add_n(model.losses))` instead",
    finds="`model.losses` added to the loss in a `strategy.run` function without scaling",
    why="summed once per replica",
    instead="`tf.nn.scale_regularization_loss(tf.add_n(model.losses))`",
)
def unscaled_regularization_loss(ctx: FileContext):
    for function in ctx.run_functions:
        for node in ctx.local(function):
            if is_model_losses(node) and _losses_added_unscaled(ctx, function, node):
                yield hit(node)


@rule(
    code="TFG010",
    name="optimizer-clipping-per-replica",
    message="optimizer `{kw}` under a tf.distribute strategy clips each replica's gradients separately; clip "
    "the all-reduced gradients (e.g. `tf.clip_by_global_norm`) in the step",
    finds="optimizer `clipnorm`/`clipvalue` in a file that builds a `tf.distribute` strategy of several replicas",
    why="clips each replica's gradients separately",
    instead="clip the all-reduced gradients in the step",
)
def optimizer_clipping_per_replica(ctx: FileContext):
    # OneDeviceStrategy's one replica sees the whole gradient: its optimizer clips it right.
    several = [c for c in ctx.calls if is_strategy_ctor(ctx, c) and not ctx.func_name(c).endswith(".OneDeviceStrategy")]
    if not several:
        return
    for call in ctx.calls:
        name = ctx.func_name(call) or ""
        if not (name.startswith("keras.optimizers.") and name.split(".")[-1][:1].isupper()):
            continue
        for keyword in call.keywords:
            if keyword.arg in ("clipnorm", "clipvalue") and const(keyword.value) is not None:
                yield hit(keyword, kw=keyword.arg)

"""GradientTape: what the tape records (model.losses) and how long it lives (persistent tapes)."""

from __future__ import annotations

import ast

from tfgen.lint.context import FileContext, assigned_name, const, dotted, is_method_call, is_model_losses, kw
from tfgen.lint.keras_steps import MODELS
from tfgen.lint.registry import hit, rule

REGULARIZER_KEYWORDS = ("kernel_regularizer", "bias_regularizer", "activity_regularizer")


def _tapes_by_function(ctx: FileContext) -> dict:
    """{enclosing function (None: the module): set of tape names} for every named GradientTape."""
    by_function: dict = {}
    for with_node, name, _ in ctx.tapes:
        names = by_function.setdefault(ctx.enclosing_function(with_node), set())
        if name:
            names.add(name)
    return by_function


def _is_gradient_of(node, names) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "gradient"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in names
    )


def _gradient_calls(ctx: FileContext):
    """(scope, gradient call) of each `tape.gradient(...)` beside its tape."""
    for function, names in _tapes_by_function(ctx).items():
        scope = function or ctx.tree
        for node in ctx.local(scope):
            if _is_gradient_of(node, names):
                yield scope, node


@rule(
    code="TFG013",
    name="model-losses-outside-tape",
    message="`model.losses` read outside the GradientTape block: the tape does not record it and the "
    "regularizers get no gradient; read it inside the `with tf.GradientTape()` block",
    finds="`model.losses` read outside the `GradientTape` block (before the gradient)",
    why="the tape does not record it: no gradient for the regularizers",
    instead="read it inside the tape",
)
def model_losses_outside_tape(ctx: FileContext):
    last_gradient: dict = {}
    for scope, call in _gradient_calls(ctx):
        last_gradient[scope] = max(last_gradient.get(scope, 0), call.lineno)
    for scope, line in last_gradient.items():
        for node in ctx.local(scope):
            if is_model_losses(node) and not ctx.in_tape(node) and node.lineno <= line:
                yield hit(node)


def _model_of(ctx: FileContext, keyword) -> str | None:
    """The name a regularizer's model is assigned to, when the regularizer is written in the arguments of a
    `keras.Sequential(...)`/`keras.Model(...)` call assigned to a name."""
    node = ctx.parent.get(keyword)
    while node is not None and not isinstance(node, ast.stmt):
        if isinstance(node, ast.Call) and ctx.func_name(node) in MODELS:
            return assigned_name(ctx, node)
        node = ctx.parent.get(node)
    return None


def _trained_by_fit(ctx: FileContext, model: str | None) -> bool:
    """Whether a stock Keras model named `model` is trained by `fit` (which adds its regularizers itself)."""
    return model is not None and any(is_method_call(c, "fit") and dotted(c.func.value) == model for c in ctx.calls)


def _is_none(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _regularizer(ctx: FileContext):
    """The first regularizer a custom step may have to add (not one of a stock model trained by `fit`)."""
    for call in ctx.calls:
        for keyword in call.keywords:
            if keyword.arg not in REGULARIZER_KEYWORDS or _is_none(keyword.value):
                continue
            if not _trained_by_fit(ctx, _model_of(ctx, keyword)):
                return keyword
    return None


def _reads_losses_somewhere(ctx: FileContext) -> bool:
    """Some object's `.losses` is read (maybe the model's, under another name), or a regularization helper runs."""
    if any(
        isinstance(n, ast.Attribute)
        and n.attr == "losses"
        and (ctx.canonical(n.value) or "").split(".")[0] not in ("keras", "tf")
        for n in ctx.nodes
    ):
        return True
    for call in ctx.calls:
        name = ctx.canonical(call.func) or ""
        if "regulari" in name.lower() and not name.startswith("keras.regularizers"):
            return True
    return False


@rule(
    code="TFG014",
    name="regularizers-never-added",
    message="the model has regularizers (line {line}) but this custom step never adds `model.losses`: they "
    "have no effect; add `tf.add_n(model.losses)` to the loss inside the tape",
    finds="a custom step that never adds `model.losses` while the file's model has regularizers",
    why="the regularizers have no effect",
    instead="add `tf.add_n(model.losses)` inside the tape",
)
def regularizers_never_added(ctx: FileContext):
    regularizer = _regularizer(ctx)
    if regularizer is None or _reads_losses_somewhere(ctx):
        return
    for _, call in _gradient_calls(ctx):
        yield hit(call, line=regularizer.lineno)


def _is_gradient_call(node):
    """The tape's dotted name when `node` is `tape.gradient(...)`, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "gradient":
        return dotted(node.func.value)
    return None


def _tape_facts(ctx: FileContext, scope) -> tuple[set, dict, set, set]:
    """(deleted names, {tape: names its gradients are assigned to}, names read in `apply_gradients` calls,
    tapes whose `gradient` is called inside an `apply_gradients` call) of one scope."""
    deleted, gradients, applied_names, applied_tapes = set(), {}, set(), set()
    for node in ctx.local(scope):
        if isinstance(node, ast.Delete):
            deleted.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Assign) and _is_gradient_call(node.value):
            names = gradients.setdefault(_is_gradient_call(node.value), set())
            for target in node.targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "apply_gradients"
        ):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name):
                    applied_names.add(inner.id)
                elif _is_gradient_call(inner):
                    applied_tapes.add(_is_gradient_call(inner))
    return deleted, gradients, applied_names, applied_tapes


@rule(
    code="TFG017",
    name="persistent-tape-not-deleted",
    message="`persistent=True` tape `{tape}` is never deleted: it holds every intermediate tensor of the "
    "step; drop `persistent=True`, or `del {tape}` after the last `gradient` call",
    finds="a `persistent=True` tape in eager code (not in a `tf.function` or a Keras `train_step`) whose "
    "gradients reach `apply_gradients`, never `del`eted",
    why="holds every intermediate tensor",
    instead="drop `persistent=True`, or `del tape`",
)
def persistent_tape_not_deleted(ctx: FileContext):
    for with_node, name, call in ctx.tapes:
        persistent = kw(call, "persistent")
        if not name or persistent is None or const(persistent.value) is not True:
            continue
        if ctx.in_traced(with_node):
            continue  # traced (tf.function, a Keras train_step): the tape lives only while tracing
        scope = ctx.enclosing_function(with_node) or ctx.tree
        deleted, gradients, applied_names, applied_tapes = ctx.cached(
            ("tape-facts", id(scope)), lambda scope=scope: _tape_facts(ctx, scope)
        )
        if name not in deleted and (name in applied_tapes or gradients.get(name, set()) & applied_names):
            yield hit(call, tape=name)

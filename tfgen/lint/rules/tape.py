"""GradientTape: what the tape records (model.losses) and how long it lives (persistent tapes)."""

from __future__ import annotations

import ast

from ..context import FileContext, const, dotted, is_model_losses, kw, walk_local
from ..registry import hit, rule

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
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "gradient"
            and isinstance(node.func.value, ast.Name) and node.func.value.id in names)


def _gradient_calls(ctx: FileContext):
    """(scope, gradient call) of each `tape.gradient(...)` beside its tape."""
    for function, names in _tapes_by_function(ctx).items():
        scope = function or ctx.tree
        for node in walk_local(scope):
            if _is_gradient_of(node, names):
                yield scope, node


@rule(code="TFG013", name="model-losses-outside-tape",
      message="`model.losses` read outside the GradientTape block: the tape does not record it and the "
              "regularizers get no gradient; read it inside the `with tf.GradientTape()` block",
      finds="`model.losses` read outside the `GradientTape` block (before the gradient)",
      why="the tape does not record it: no gradient for the regularizers",
      instead="read it inside the tape")
def model_losses_outside_tape(ctx: FileContext):
    last_gradient: dict = {}
    for scope, call in _gradient_calls(ctx):
        last_gradient[scope] = max(last_gradient.get(scope, 0), call.lineno)
    for scope, line in last_gradient.items():
        for node in walk_local(scope):
            if is_model_losses(node) and not ctx.in_tape(node) and node.lineno <= line:
                yield hit(node)


def _regularizer(ctx: FileContext):
    for call in ctx.calls:
        for keyword in call.keywords:
            if keyword.arg in REGULARIZER_KEYWORDS and not (
                    isinstance(keyword.value, ast.Constant) and keyword.value.value is None):
                return keyword
    return None


def _reads_losses_somewhere(ctx: FileContext) -> bool:
    """Some object's `.losses` is read (maybe the model's, under another name), or a regularization helper runs."""
    if any(isinstance(n, ast.Attribute) and n.attr == "losses"
           and (ctx.canonical(n.value) or "").split(".")[0] not in ("keras", "tf") for n in ctx.nodes):
        return True
    for call in ctx.calls:
        name = ctx.canonical(call.func) or ""
        if "regulari" in name.lower() and not name.startswith("keras.regularizers"):
            return True
    return False


@rule(code="TFG014", name="regularizers-never-added",
      message="the model has regularizers (line {line}) but this custom step never adds `model.losses`: they "
              "have no effect; add `tf.add_n(model.losses)` to the loss inside the tape",
      finds="a custom step that never adds `model.losses` while the file's model has regularizers",
      why="the regularizers have no effect",
      instead="add `tf.add_n(model.losses)` inside the tape")
def regularizers_never_added(ctx: FileContext):
    regularizer = _regularizer(ctx)
    if regularizer is None or _reads_losses_somewhere(ctx):
        return
    for _, call in _gradient_calls(ctx):
        yield hit(call, line=regularizer.lineno)


def _gradient_names(local, tape: str) -> set[str]:
    names = set()
    for node in local:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "gradient" and \
                dotted(node.value.func.value) == tape:
            for target in node.targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _gradients_applied(local, tape: str) -> bool:
    gradient_names = _gradient_names(local, tape)
    for node in local:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "apply_gradients"):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.Name) and inner.id in gradient_names:
                return True
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and \
                    inner.func.attr == "gradient" and dotted(inner.func.value) == tape:
                return True
    return False


def _deleted(local, tape: str) -> bool:
    return any(isinstance(n, ast.Delete) and any(isinstance(t, ast.Name) and t.id == tape for t in n.targets)
               for n in local)


@rule(code="TFG017", name="persistent-tape-not-deleted",
      message="`persistent=True` tape `{tape}` is never deleted: it holds every intermediate tensor of the "
              "step; drop `persistent=True`, or `del {tape}` after the last `gradient` call",
      finds="a `persistent=True` tape whose gradients reach `apply_gradients`, never `del`eted",
      why="holds every intermediate tensor",
      instead="drop `persistent=True`, or `del tape`")
def persistent_tape_not_deleted(ctx: FileContext):
    for with_node, name, call in ctx.tapes:
        persistent = kw(call, "persistent")
        if not name or persistent is None or const(persistent.value) is not True:
            continue
        local = list(walk_local(ctx.enclosing_function(with_node) or ctx.tree))
        if not _deleted(local, name) and _gradients_applied(local, name):
            yield hit(call, tape=name)

"""Keras model subclasses, and the `train_step`/`test_step`/`predict_step` methods that `fit` traces."""

from __future__ import annotations

import ast

KERAS_STEPS = ("train_step", "test_step", "predict_step")
KERAS_LOOPS = ("fit", "evaluate", "predict", "train_on_batch", "test_on_batch", "predict_on_batch")
MODELS = ("keras.Sequential", "keras.Model", "keras.models.Sequential", "keras.models.Model")


def model_classes(ctx) -> dict[str, ast.ClassDef]:
    """{name: class} of the file's Keras model subclasses (of keras.Model, or of another such local class)."""
    classes = [n for n in ctx.nodes if isinstance(n, ast.ClassDef)]
    found: dict[str, ast.ClassDef] = {}
    grew = True
    while grew:
        more = {
            c.name: c for c in classes if c.name not in found and any(_is_model_base(ctx, b, found) for b in c.bases)
        }
        grew = bool(more)
        found.update(more)
    return found


def _is_model_base(ctx, base, local) -> bool:
    return ctx.canonical(base) in MODELS or (isinstance(base, ast.Name) and base.id in local)


def _runs_eagerly(ctx) -> bool:
    """`compile(run_eagerly=True)` or `model.run_eagerly = True` somewhere in the file."""
    for node in ctx.nodes:
        if isinstance(node, ast.keyword) and node.arg == "run_eagerly" and _is_true(node.value):
            return True
        targets = node.targets if isinstance(node, ast.Assign) and _is_true(node.value) else []
        if any(isinstance(t, ast.Attribute) and t.attr == "run_eagerly" for t in targets):
            return True
    return False


def _is_true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _instance(node, classes: dict):
    """(variable, class name) when `node` is `x = SomeModel(...)` (or `self.x = ...`), else None."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)):
        return None
    func, target = node.value.func, node.targets[0]
    name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", None)
    if isinstance(func, ast.Name) and func.id in classes and name:
        return name, func.id
    return None


def _instances(ctx, classes: dict) -> dict[str, str]:
    """{variable: class name} of the single-name assignments `x = SomeModel(...)`."""
    return dict(pair for pair in (_instance(node, classes) for node in ctx.nodes) if pair)


def _fitted(ctx, classes: dict) -> set[str]:
    """The model classes an instance of which is run by Keras's own loops (`fit`, `evaluate`, ...), with
    their local base classes."""
    instances = _instances(ctx, classes)
    fitted = set()
    for call in ctx.calls:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in KERAS_LOOPS:
            receiver = func.value.id if isinstance(func.value, ast.Name) else getattr(func.value, "attr", None)
            fitted.add(instances.get(receiver))
    queue = [name for name in fitted if name]
    while queue:
        for base in classes[queue.pop()].bases:
            if isinstance(base, ast.Name) and base.id in classes and base.id not in fitted:
                fitted.add(base.id)
                queue.append(base.id)
    return fitted


def traced_keras_steps(ctx) -> set:
    """The step methods of the model classes run by `fit` (or `evaluate`, `predict`), which Keras traces,
    unless the file asks Keras to run eagerly."""
    classes = ctx.model_classes
    if _runs_eagerly(ctx):
        return set()
    fitted = _fitted(ctx, classes)
    return {
        method
        for name in KERAS_STEPS
        for method in ctx.methods.get(name, [])
        if getattr(ctx.parent.get(method), "name", None) in fitted
    }

"""Mixed precision: loss scaling, and the output layer's dtype."""

from __future__ import annotations

import ast

from tfgen.lint.context import FileContext, const, dotted, is_method_call, kw
from tfgen.lint.registry import hit, rule

FLOAT32 = ("float32", "float64", "tf.float32", "tf.float64")
POLICY_SETTERS = ("set_global_policy", "set_policy", "Policy", "set_dtype_policy")
LOSS_SCALING = ("scale_loss", "get_scaled_loss")  # Keras 3, tf.keras 2
SEQUENTIAL = ("keras.Sequential", "keras.models.Sequential")
FUNCTIONAL = ("keras.Model", "keras.models.Model")


def mixed_policy_calls(ctx: FileContext):
    for call in ctx.calls:
        last = (ctx.func_name(call) or "").split(".")[-1]
        if last in POLICY_SETTERS and call.args and const(call.args[0]) == "mixed_float16":
            yield call


def _compiled_update(ctx: FileContext, call: ast.Call) -> bool:
    """`self.optimizer.apply_gradients(...)` in a Keras `train_step` that scales its loss with that optimizer:
    `compile()` wraps its optimizer in a LossScaleOptimizer itself under `mixed_float16`."""
    step = ctx.enclosing_function(call)
    if dotted(call.func.value) != "self.optimizer" or step not in ctx.keras_steps:
        return False
    return any(is_method_call(n, *LOSS_SCALING) and dotted(n.func.value) == "self.optimizer" for n in ctx.walk(step))


def _custom_loop(ctx: FileContext) -> bool:
    """A GradientTape, and an optimizer update that no `compile()` loss-scales."""
    updates = (c for c in ctx.calls if is_method_call(c, "apply_gradients"))
    return bool(ctx.tapes) and any(not _compiled_update(ctx, c) for c in updates)


@rule(
    code="TFG011",
    name="mixed-precision-without-loss-scaling",
    message="`mixed_float16` in a custom loop with no `LossScaleOptimizer`: float16 gradients underflow to "
    "zero; wrap the optimizer in `keras.mixed_precision.LossScaleOptimizer`",
    finds="`mixed_float16` in a custom loop with no `LossScaleOptimizer` (a Keras `train_step` that scales its "
    "loss with `self.optimizer` has the one `compile()` wraps)",
    why="float16 gradients underflow to zero",
    instead="`keras.mixed_precision.LossScaleOptimizer`",
)
def mixed_precision_without_loss_scaling(ctx: FileContext):
    if not _custom_loop(ctx) or "LossScaleOptimizer" in ctx.attr_names:
        return
    for call in mixed_policy_calls(ctx):
        yield hit(call)


def _activation_value(layer: ast.Call, name: str):
    activation = kw(layer, "activation")
    if activation is not None:
        return activation.value
    if name == "Activation" and layer.args:
        return layer.args[0]
    if name == "Dense" and len(layer.args) > 1:
        return layer.args[1]
    return None


def _final_activation(ctx: FileContext, layer) -> str | None:
    """'softmax'/'sigmoid' when the layer constructor `layer` applies one in the policy's dtype."""
    if not isinstance(layer, ast.Call):
        return None
    dtype = kw(layer, "dtype")
    if dtype is not None and (const(dtype.value) in FLOAT32 or ctx.canonical(dtype.value) in FLOAT32):
        return None
    name = (ctx.func_name(layer) or "").split(".")[-1]
    if name == "Softmax":
        return "softmax"
    value = _activation_value(layer, name)
    text = const(value) if isinstance(value, ast.Constant) else (ctx.canonical(value) if value is not None else None)
    if isinstance(text, str) and text.split(".")[-1] in ("softmax", "sigmoid"):
        return text.split(".")[-1]
    return None


def _output_exprs(call: ast.Call) -> list:
    outputs = kw(call, "outputs")
    outputs = outputs.value if outputs else (call.args[1] if len(call.args) > 1 else None)
    if isinstance(outputs, ast.Dict):
        return list(outputs.values)
    if isinstance(outputs, (ast.List, ast.Tuple)):
        return list(outputs.elts)
    return [outputs] if outputs else []


def _last_layers(ctx: FileContext, call: ast.Call) -> list:
    """The constructors of a Sequential's last layer, or of the layers that make a functional model's outputs."""
    name = ctx.func_name(call) or ""
    if name in SEQUENTIAL and call.args and isinstance(call.args[0], (ast.List, ast.Tuple)) and call.args[0].elts:
        return [call.args[0].elts[-1]]
    if name not in FUNCTIONAL:
        return []
    layers = []
    scope = ctx.enclosing_function(call) or ctx.tree
    for expr in _output_exprs(call):
        if isinstance(expr, ast.Name):
            expr = ctx.last_assignment(scope, expr.id, call.lineno)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Call):
            layers.append(expr.func)
    return layers


@rule(
    code="TFG012",
    name="float16-final-activation",
    message="final `{act}` computes in float16 under `mixed_float16` and can overflow; give the output layer "
    '`dtype="float32"`',
    finds='a final softmax/sigmoid without `dtype="float32"` under `mixed_float16`',
    why="it computes in float16 and overflows",
    instead='`dtype="float32"` on the output layer',
)
def float16_final_activation(ctx: FileContext):
    if not any(True for _ in mixed_policy_calls(ctx)):
        return
    for call in ctx.calls:
        for layer in _last_layers(ctx, call):
            activation = _final_activation(ctx, layer)
            if activation:
                yield hit(layer, act=activation)

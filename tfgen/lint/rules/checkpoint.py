"""Checkpoints: a resumable run saves the optimizer with the model."""

from __future__ import annotations

import ast

from tfgen.lint.context import FileContext, dotted, is_method_call
from tfgen.lint.registry import hit, rule

CHECKPOINTS = ("tf.train.Checkpoint", "tf.compat.v2.train.Checkpoint")


def _optimizerish(ctx: FileContext, node) -> bool:
    return "optim" in (dotted(node) or "").lower() or (
        isinstance(node, ast.Call) and "optimizers" in (ctx.func_name(node) or "")
    )


def _saves_optimizer(ctx: FileContext, call: ast.Call) -> bool:
    return any(k.arg is None or "optim" in (k.arg or "").lower() or _optimizerish(ctx, k.value) for k in call.keywords)


def _saves_model(call: ast.Call) -> bool:
    return any(k.arg == "model" or "model" in (dotted(k.value) or "").lower() for k in call.keywords)


def _saves_whole_model(ctx: FileContext) -> bool:
    return any(is_method_call(c, "save") and "model" in (dotted(c.func.value) or "").lower() for c in ctx.calls)


@rule(
    code="TFG015",
    name="checkpoint-without-optimizer",
    message="{what} saves the model but not the optimizer: a resumed run loses the optimizer state (Adam's "
    "moments, the step); use `tf.train.Checkpoint(model=..., optimizer=...)` with a CheckpointManager",
    finds="`tf.train.Checkpoint(model=...)` without the optimizer, or `save_weights` as a training loop's "
    "only checkpoint",
    why="a resume loses Adam's moments and the step",
    instead="`tf.train.Checkpoint(model=..., optimizer=...)` + `CheckpointManager`",
)
def checkpoint_without_optimizer(ctx: FileContext):
    if not any(is_method_call(c, "apply_gradients", "minimize") for c in ctx.calls):
        return
    checkpoints = [c for c in ctx.calls if ctx.func_name(c) in CHECKPOINTS]
    if any(_saves_optimizer(ctx, c) for c in checkpoints):
        return
    for call in checkpoints:
        if _saves_model(call):
            yield hit(call, what="`tf.train.Checkpoint` without `optimizer=`")
    if checkpoints or _saves_whole_model(ctx):
        return
    for call in ctx.calls:
        if is_method_call(call, "save_weights") and isinstance(ctx.innermost_loop(call), (ast.For, ast.While)):
            yield hit(call, what="`save_weights`, the training loop's only checkpoint,")

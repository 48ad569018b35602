"""Which calls run a training step, and which loops train (not evaluation, test or prediction loops)."""

from __future__ import annotations

import ast
import re

from tfgen.lint.context import FileContext, dotted, is_optimizer_update

EVALUATION_WORDS = ("test", "eval", "valid", "val_", "predict", "infer")
TRAINING_NAME = re.compile(r"(^|_)train(_|$)")  # train, train_step, distributed_train_step (not trainable)


def named_training(expr) -> bool:
    """A callee named as a training step (`train_step`, `trainer.train`), not as an evaluation one."""
    last = (dotted(expr) or "").split(".")[-1].lower()
    return bool(TRAINING_NAME.search(last)) and not any(word in last for word in EVALUATION_WORDS)


def _function_trains(ctx: FileContext, function) -> bool:
    """Whether this function's own code applies gradients, records a GradientTape, or calls a training
    step the linter cannot resolve."""
    for node in ctx.walk(function):
        if is_optimizer_update(node) or id(node) in ctx.tape_blocks:
            return True
        if isinstance(node, ast.Call) and not ctx.resolve_function(node.func) and named_training(node.func):
            return True
    return False


def _updates_weights(ctx: FileContext, functions) -> bool:
    """Whether these local functions, or what they call, train (each function examined once per file)."""
    key = ("trains", frozenset(id(f) for f in functions))
    return ctx.cached(
        key,
        lambda: any(
            ctx.cached(("function-trains", id(f)), lambda f=f: _function_trains(ctx, f)) for f in ctx.closure(functions)
        ),
    )


def _step_functions(ctx: FileContext, call: ast.Call) -> list:
    functions = list(ctx.resolve_function(call.func))
    if ctx.is_strategy_run(call) and call.args:
        functions += ctx.resolve_function(call.args[0])
    return functions


def call_trains(ctx: FileContext, call: ast.Call) -> bool | None:
    """True for a training step, False for an evaluation step or a visible non-training function, None unknown."""
    if is_optimizer_update(call):
        return True
    functions = _step_functions(ctx, call)
    if functions:
        return _updates_weights(ctx, functions)
    callee = call.args[0] if ctx.is_strategy_run(call) and call.args else call.func
    return True if named_training(callee) else None


def trains(ctx: FileContext, loop) -> bool:
    """Whether the loop's body runs a training step (not an evaluation, test or prediction step), or
    records a GradientTape itself (a step written inline, e.g. updating variables with `assign_sub`)."""
    return any(
        (isinstance(node, ast.Call) and call_trains(ctx, node)) or id(node) in ctx.tape_blocks
        for node in ctx.local(loop)
    )

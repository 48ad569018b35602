"""tf.data: pipeline order (shuffle, cache, batch) and prefetch before a training loop."""

from __future__ import annotations

import ast

from tfgen.lint.context import FileContext
from tfgen.lint.pipelines import pipelines, prefetched_at_end
from tfgen.lint.registry import hit, rule
from tfgen.lint.steps import trains

BATCH_OPS = {"batch", "padded_batch", "ragged_batch"}


def _attr_position(ctx: FileContext, call) -> tuple[int, int]:
    """Locate a `.method(...)` finding at the method name (where a chained call starts)."""
    func = call.func
    end_line, end_col = func.value.end_lineno, func.value.end_col_offset
    text = ctx.lines[end_line - 1] if end_line and end_line <= len(ctx.lines) else ""
    col = text.find(func.attr, end_col) if end_line == func.end_lineno else -1
    if col < 0:
        return func.end_lineno, func.end_col_offset - len(func.attr) + 1
    return end_line, col + 1


def _ordered_ops(ctx: FileContext):
    """Each (op, call) once, with the pipeline state before it: (op, call, batched, after_random_map)."""
    seen = set()
    for ops in pipelines(ctx)[0]:
        batched, random_map = False, False
        for op, call in ops:
            if id(call) not in seen:
                seen.add(id(call))
                yield op, call, batched, random_map
            if op in BATCH_OPS:
                batched = True
            elif op == "unbatch":
                batched = False
            elif op == "map" and call.args and _is_random_fn(ctx, call.args[0]):
                random_map = True


def _is_random_call(ctx: FileContext, node) -> bool:
    name = ctx.func_name(node) or ""
    last = name.split(".")[-1]
    if name.startswith("tf.random.") and "stateless" not in name and last != "set_seed":
        return True
    if name.startswith("tf.image.random_"):
        return True
    return name.startswith("keras.layers.Random") or (last.startswith("Random") and "layers" in name)


def _is_random_body(ctx: FileContext, body) -> bool:
    return ctx.cached(
        ("random", id(body)),
        lambda: any(isinstance(node, ast.Call) and _is_random_call(ctx, node) for node in ctx.walk(body)),
    )


def _is_random_fn(ctx: FileContext, fn) -> bool:
    bodies = [fn] if isinstance(fn, ast.Lambda) else ctx.resolve_function(fn)
    return any(_is_random_body(ctx, body) for body in bodies)


@rule(
    code="TFG005",
    name="shuffle-after-batch",
    message="`shuffle` after `batch` only reorders whole batches of the same examples; shuffle before `batch`",
    finds="`shuffle` after `batch`",
    why="reorders whole batches of the same examples",
    instead="`shuffle` before `batch`",
)
def shuffle_after_batch(ctx: FileContext):
    for op, call, batched, _ in _ordered_ops(ctx):
        if op == "shuffle" and batched:
            yield hit(_attr_position(ctx, call))


@rule(
    code="TFG006",
    name="cache-after-random-map",
    message="`cache()` after a random augmentation map freezes the first epoch's random draw; cache before "
    "the random `map`",
    finds="`cache()` after a random augmentation `map`",
    why="freezes the first epoch's random draw",
    instead="`cache()` before the random `map`",
)
def cache_after_random_map(ctx: FileContext):
    for op, call, _, random_map in _ordered_ops(ctx):
        if op == "cache" and random_map:
            yield hit(_attr_position(ctx, call))


@rule(
    code="TFG004",
    name="dataset-without-prefetch",
    message="tf.data pipeline `{name}` feeds a training step with no `prefetch` after its last `map`/`batch`: "
    "the accelerator waits for each batch; end the pipeline with `.prefetch(tf.data.AUTOTUNE)`",
    finds="a `tf.data` pipeline with no `prefetch` after its last `map`/`batch` iterated by a loop that runs a "
    "training step (evaluation, test and prediction loops are not reported)",
    why="the accelerator waits for each batch",
    instead="end with `.prefetch(tf.data.AUTOTUNE)`",
)
def dataset_without_prefetch(ctx: FileContext):
    for loop, name, ops in pipelines(ctx)[1]:
        if prefetched_at_end(ops):
            continue
        if trains(ctx, loop):
            yield hit(loop.iter, name=name)

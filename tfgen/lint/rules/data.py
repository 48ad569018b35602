"""tf.data: pipeline order (shuffle, cache, batch) and prefetch before a training loop."""

from __future__ import annotations

import ast
import re

from tfgen.lint.context import FileContext, const, dotted, is_optimizer_update, is_strategy_name, kw, names_of
from tfgen.lint.registry import hit, rule

BATCH_OPS = {"batch", "padded_batch", "ragged_batch"}
MAX_CHAIN = 256  # a longer pipeline is not followed (precision: quiet), which keeps hostile files linear
DISTRIBUTE = ("experimental_distribute_dataset", "distribute_datasets_from_function")
# experimental_distribute_dataset prefetches to the devices itself (TF's distributed input guide)
PREFETCHING = ("prefetch", "experimental_distribute_dataset")
DATASET_LOADERS = ("tensorflow_datasets.load",)
FROM_DIRECTORY = re.compile(r"keras\.(utils|preprocessing)\.\w+_dataset_from_directory")
EVALUATION_WORDS = ("test", "eval", "valid", "val_", "predict", "infer")
TRAINING_NAME = re.compile(r"(^|_)train(_|$)")  # train, train_step, distributed_train_step (not trainable)


def _source_ops(ctx: FileContext, node):
    """The ops of a call that makes a dataset (`tf.data.*`, `tfds.load`, `keras.utils.*_dataset_from_directory`,
    batched unless `batch_size=None`), else None."""
    name = (ctx.func_name(node) or "") if isinstance(node, ast.Call) else ""
    if name.startswith("tf.data.") or name in DATASET_LOADERS:
        return []
    if not FROM_DIRECTORY.fullmatch(name):
        return None
    batch_size = kw(node, "batch_size")
    unbatched = batch_size is not None and isinstance(batch_size.value, ast.Constant) and batch_size.value.value is None
    return [] if unbatched else [("batch", node)]


def _start_ops(ctx: FileContext, node, known: dict):
    """The ops a chain starts from when `node` is a visible dataset (a source, a known name, a split of one,
    or a call of a local function returning a pipeline), else None."""
    if _source_ops(ctx, node) is not None:
        return _source_ops(ctx, node)
    if isinstance(node, ast.Subscript):  # tfds.load(...)["train"], splits[0]
        return _start_ops(ctx, node.value, known)
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.Call) and len(ctx.resolve_function(node.func)) == 1:
        return returned_ops(ctx, ctx.resolve_function(node.func)[0])
    return None


def _chain(ctx: FileContext, expr, known: dict):
    """[(op, call)] of a dataset method chain, or None when `expr` is not a visible pipeline."""
    ops, node = [], expr
    while len(ops) <= MAX_CHAIN:
        start = _start_ops(ctx, node, known)
        if start is not None:
            return start + list(reversed(ops)) if len(start) + len(ops) <= MAX_CHAIN else None
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            return None
        ops.append((node.func.attr, node))
        distributed = is_strategy_name(node.func.value) and node.func.attr in DISTRIBUTE and node.args
        node = node.args[0] if distributed else node.func.value
    return None


def _assigned_ops(ctx: FileContext, value, known: dict):
    ops = _chain(ctx, value, known)
    if ops is None and isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "iter":
        ops = _chain(ctx, value.args[0], known) if value.args else None
    return ops


def _bindings(ctx: FileContext, target, value, known: dict) -> list:
    """[(name, ops or None)] that an assignment binds, tuples unpacked element by element.

    `ds, info = tfds.load(..., with_info=True)` binds the dataset (or its dict of splits) to `ds`;
    `train, test = tfds.load(..., split=[...])` binds a dataset to each name."""
    if isinstance(target, ast.Name):
        return [(target.id, _assigned_ops(ctx, value, known))]
    if not isinstance(target, (ast.Tuple, ast.List)):
        return []
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
        return [pair for t, v in zip(target.elts, value.elts, strict=True) for pair in _bindings(ctx, t, v, known)]
    names = names_of(target)
    if (ctx.func_name(value) if isinstance(value, ast.Call) else None) not in DATASET_LOADERS:
        return [(name, None) for name in names]
    with_info = kw(value, "with_info")
    if with_info is not None and const(with_info.value) is True:
        return [(name, [] if index == 0 else None) for index, name in enumerate(names)]
    return [(name, []) for name in names]


def _in_order(ctx: FileContext, scope) -> list:
    """Assignments, returns, loops and calls of a scope in the order they take effect.

    An assignment takes effect after its value (`ds = ds.shuffle(...)` reads the old `ds`)."""
    nodes = (n for n in ctx.local(scope) if isinstance(n, (ast.Assign, ast.Return, ast.For, ast.Call)))
    return sorted(
        nodes,
        key=lambda n: (
            (n.end_lineno, n.end_col_offset, 1)
            if isinstance(n, (ast.Assign, ast.Return))
            else (n.lineno, n.col_offset, 0)
        ),
    )


def _loop_source(loop: ast.For):
    source = loop.iter
    if (
        isinstance(source, ast.Call)
        and isinstance(source.func, ast.Name)
        and source.func.id in ("enumerate", "iter")
        and source.args
    ):
        source = source.args[0]
    return source


def _scan_node(ctx: FileContext, node, known: dict, found: tuple) -> None:
    chains, loops, returns = found
    if isinstance(node, ast.Call):
        if not isinstance(ctx.parent.get(node), ast.Attribute):  # the top of a chain only
            ops = _chain(ctx, node, known)
            if ops:
                chains.append(ops)
    elif isinstance(node, ast.Assign):
        for target in node.targets:
            for name, ops in _bindings(ctx, target, node.value, known):
                if ops is None:
                    known.pop(name, None)
                else:
                    known[name] = ops
    elif isinstance(node, ast.Return):
        returns.append(_assigned_ops(ctx, node.value, known) if node.value else None)
    else:
        source = _loop_source(node)
        if isinstance(source, ast.Name) and source.id in known:
            loops.append((node, source.id, known[source.id]))


def _scan(ctx: FileContext, scope) -> tuple:
    """(method chains, loops over a visible pipeline, returned pipelines) of one scope, computed once."""
    key = ("scan", id(scope))
    if key not in ctx.cache:
        ctx.cache[key] = None  # a function that returns its own call is not followed (recursion)
        known: dict[str, list] = {}
        found: tuple = ([], [], [])
        for node in _in_order(ctx, scope):
            _scan_node(ctx, node, known, found)
        ctx.cache[key] = found
    return ctx.cache[key]


def returned_ops(ctx: FileContext, function):
    """The pipeline a local function returns, when every `return` returns the same visible one, else None."""
    found = _scan(ctx, function)
    if found is None or not found[2] or any(ops is None for ops in found[2]):
        return None
    shapes = {tuple(op for op, _ in ops) for ops in found[2]}
    return found[2][0] if len(shapes) == 1 else None


def pipelines(ctx: FileContext):
    """(every visible method chain, every `for` over a visible pipeline as (loop, name, ops))."""

    def compute():
        chains, loops = [], []
        for scope in ctx.scopes():
            found = _scan(ctx, scope)
            chains.extend(found[0])
            loops.extend(found[1])
        return chains, loops

    return ctx.cached("pipelines", compute)


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


def _named_training(expr) -> bool:
    """A callee named as a training step (`train_step`, `trainer.train`), not as an evaluation one."""
    last = (dotted(expr) or "").split(".")[-1].lower()
    return bool(TRAINING_NAME.search(last)) and not any(word in last for word in EVALUATION_WORDS)


def _function_trains(ctx: FileContext, function) -> bool:
    """Whether this function's own code applies gradients, records a GradientTape, or calls a training
    step the linter cannot resolve."""
    for node in ctx.walk(function):
        if is_optimizer_update(node) or id(node) in ctx.tape_blocks:
            return True
        if isinstance(node, ast.Call) and not ctx.resolve_function(node.func) and _named_training(node.func):
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


def _call_trains(ctx: FileContext, call: ast.Call) -> bool | None:
    """True for a training step, False for an evaluation step or a visible non-training function, None unknown."""
    if is_optimizer_update(call):
        return True
    functions = _step_functions(ctx, call)
    if functions:
        return _updates_weights(ctx, functions)
    callee = call.args[0] if ctx.is_strategy_run(call) and call.args else call.func
    return True if _named_training(callee) else None


def trains(ctx: FileContext, loop) -> bool:
    """Whether the loop's body runs a training step (not an evaluation, test or prediction step)."""
    return any(isinstance(node, ast.Call) and _call_trains(ctx, node) for node in ctx.local(loop))


@rule(
    code="TFG004",
    name="dataset-without-prefetch",
    message="tf.data pipeline `{name}` feeds a training step without `prefetch`: the accelerator waits for "
    "each batch; end the pipeline with `.prefetch(tf.data.AUTOTUNE)`",
    finds="a `tf.data` pipeline with no `prefetch` iterated by a loop that runs a training step (evaluation, "
    "test and prediction loops are not reported)",
    why="the accelerator waits for each batch",
    instead="end with `.prefetch(tf.data.AUTOTUNE)`",
)
def dataset_without_prefetch(ctx: FileContext):
    for loop, name, ops in pipelines(ctx)[1]:
        if any(op in PREFETCHING for op, _ in ops):
            continue
        if trains(ctx, loop):
            yield hit(loop.iter, name=name)

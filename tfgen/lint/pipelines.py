"""tf.data pipelines as the data rules see them: where a pipeline starts, its ops in order, and the loops over it.

A pipeline starts at a dataset source (`tf.data.*`, `tfds.load` and its splits,
`keras.utils.*_dataset_from_directory`), at a local function returning one, or at a function parameter
that the function's only call passes one; its ops are the method calls chained after it, through
assignments. What cannot be seen is None: the rules stay quiet on it.
"""

from __future__ import annotations

import ast
import re

from tfgen.lint.context import FUNCS, FileContext, const, dotted, is_strategy_name, kw

MAX_CHAIN = 256  # a longer pipeline is not followed (precision: quiet), which keeps hostile files linear
DISTRIBUTE = ("experimental_distribute_dataset", "distribute_datasets_from_function")
# experimental_distribute_dataset prefetches to the devices itself (TF's distributed input guide)
PREFETCHING = ("prefetch", "experimental_distribute_dataset")
WORK_OPS = {
    "map",
    "batch",
    "padded_batch",
    "ragged_batch",
    "unbatch",
    "rebatch",
    "filter",
    "flat_map",
    "interleave",
    "parallel_interleave",
    "scan",
    "window",
    "group_by_window",
    "bucket_by_sequence_length",
}
DATASET_LOADERS = ("tensorflow_datasets.load",)
FROM_DIRECTORY = re.compile(r"keras\.(utils|preprocessing)\.\w+_dataset_from_directory")
COMBINERS = (
    "tf.data.Dataset.zip",
    "tf.data.Dataset.sample_from_datasets",
    "tf.data.Dataset.choose_from_datasets",
    "tf.data.experimental.sample_from_datasets",
    "tf.data.experimental.choose_from_datasets",
)


def _source_ops(ctx: FileContext, node):
    """The ops of a call that makes a dataset, else None: `tf.data.*`, `tfds.load` (which prefetches) and
    `keras.utils.*_dataset_from_directory` (which batches unless `batch_size=None`, then prefetches)."""
    name = (ctx.func_name(node) or "") if isinstance(node, ast.Call) else ""
    if name in DATASET_LOADERS:
        return _loaded(node)
    if name.startswith("tf.data."):
        return []
    if not FROM_DIRECTORY.fullmatch(name):
        return None
    batch_size = kw(node, "batch_size")
    unbatched = batch_size is not None and isinstance(batch_size.value, ast.Constant) and batch_size.value.value is None
    return [("prefetch", node)] if unbatched else [("batch", node), ("prefetch", node)]


def _loaded(call: ast.Call) -> list:
    """`tfds.load` ends its pipeline with a prefetch (unless its `read_config` says `skip_prefetch`)."""
    return [("prefetch", call)]


def _start_ops(ctx: FileContext, node, known: dict):
    """The ops a chain starts from when `node` is a visible dataset (a source, a known name, a split of one,
    or a call of a local function returning a pipeline), else None."""
    if isinstance(node, ast.Call) and ctx.func_name(node) in COMBINERS:
        return _combined_ops(ctx, node, known)
    if _source_ops(ctx, node) is not None:
        return _source_ops(ctx, node)
    if isinstance(node, ast.Subscript):  # tfds.load(...)["train"], splits[0]
        return _start_ops(ctx, node.value, known)
    if isinstance(node, ast.Name):
        return known.get(node.id)
    if isinstance(node, ast.Call) and len(ctx.resolve_function(node.func)) == 1:
        return returned_ops(ctx, ctx.resolve_function(node.func)[0])
    return None


def _combined_ops(ctx: FileContext, call: ast.Call, known: dict):
    """A zip (or sample) of datasets: prefetched when every input is, None when an input is not visible."""
    first = call.args[0] if call.args else None
    inputs = first.elts if isinstance(first, (ast.Tuple, ast.List)) else call.args
    inputs = first.values if isinstance(first, ast.Dict) else inputs
    chains = [_chain(ctx, each, known) for each in inputs]
    if not chains or any(ops is None for ops in chains):
        return None
    return [("prefetch", call)] if all(prefetched_at_end(ops) for ops in chains) else []


def prefetched_at_end(ops: list) -> bool:
    """Whether a prefetch follows the pipeline's last op that works on each element (`map`, `batch`, ...):
    a prefetch before them (one `tfds.load` adds) leaves their work on the training step's path."""
    last_work = max((index for index, (op, _) in enumerate(ops) if op in WORK_OPS), default=-1)
    return any(op in PREFETCHING for op, _ in ops[last_work + 1 :])


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
    if (ctx.func_name(value) if isinstance(value, ast.Call) else None) not in DATASET_LOADERS:
        return [(name, None) for name in _all_names(target)]
    with_info = kw(value, "with_info")
    if with_info is not None and const(with_info.value) is True:  # (dataset or splits, info)
        first, *rest = target.elts
        return [(n, _loaded(value)) for n in _all_names(first)] + [(n, None) for t in rest for n in _all_names(t)]
    return [(name, _loaded(value)) for name in _all_names(target)]


def _all_names(target) -> list[str]:
    """The names a (possibly nested) assignment target binds."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _all_names(element)]
    return [target.id] if isinstance(target, ast.Name) else []


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


def _pipeline_name(source) -> str:
    """How a finding names the pipeline a loop iterates: its variable, or the call that makes it."""
    node = source
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Call):
        node = node.func.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        return node.func.value.id
    if isinstance(node, ast.Call):
        return f"{dotted(node.func) or 'dataset'}(...)"
    return dotted(node) or "dataset"


def _record_call_site(ctx: FileContext, call: ast.Call, known: dict) -> None:
    """Remember which pipelines a call of a local function passes to its parameters."""
    functions = ctx.resolve_function(call.func)
    if len(functions) != 1 or not isinstance(call.func, ast.Name):
        return
    function = functions[0]
    positional = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(positional):
        return
    passed = list(zip(positional, call.args, strict=False)) + [(k.arg, k.value) for k in call.keywords if k.arg]
    bound = {name: _chain(ctx, value, known) for name, value in passed}
    ctx.cache.setdefault(("call-sites", id(function)), []).append(bound)


def _scan_node(ctx: FileContext, node, known: dict, found: tuple) -> None:
    chains, loops, returns = found
    if isinstance(node, ast.Call):
        _record_call_site(ctx, node, known)
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
        ops = _chain(ctx, source, known)
        if ops is not None:
            loops.append((node, _pipeline_name(source), ops))


def _scan_with(ctx: FileContext, scope, known: dict) -> tuple:
    found: tuple = ([], [], [])
    for node in _in_order(ctx, scope):
        _scan_node(ctx, node, known, found)
    return found


def _scan(ctx: FileContext, scope) -> tuple:
    """(method chains, loops over a visible pipeline, returned pipelines) of one scope, computed once."""
    key = ("scan", id(scope))
    if key not in ctx.cache:
        ctx.cache[key] = None  # a function that returns its own call is not followed (recursion)
        ctx.cache[key] = _scan_with(ctx, scope, {})
    return ctx.cache[key]


def returned_ops(ctx: FileContext, function):
    """The pipeline a local function returns, when every `return` returns the same visible one, else None."""
    found = _scan(ctx, function)
    if found is None or not found[2] or any(ops is None for ops in found[2]):
        return None
    shapes = {tuple(op for op, _ in ops) for ops in found[2]}
    return found[2][0] if len(shapes) == 1 else None


def _parameter_pipelines(ctx: FileContext, scope) -> dict:
    """{parameter: ops} of a function called once in the file, for the pipelines that call passes it."""
    sites = ctx.cache.get(("call-sites", id(scope)), []) if isinstance(scope, FUNCS) else []
    if len(sites) != 1:
        return {}
    return {name: ops for name, ops in sites[0].items() if ops is not None}


def pipelines(ctx: FileContext):
    """(every visible method chain, every `for` over a visible pipeline as (loop, name, ops)).

    Every scope is scanned once; then a function whose only call passes it a pipeline is scanned again,
    from its parameters (a pipeline goes one call deep)."""

    def compute():
        chains, loops = [], []
        scanned = [(scope, _scan(ctx, scope)) for scope in ctx.scopes()]
        seeded = [(scope, found, _parameter_pipelines(ctx, scope)) for scope, found in scanned]  # before rescans
        for scope, found, seeds in seeded:
            found = _scan_with(ctx, scope, dict(seeds)) if seeds else found
            chains.extend(found[0])
            loops.extend(found[1])
        return chains, loops

    return ctx.cached("pipelines", compute)

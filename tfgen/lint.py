"""`tfgen lint`: the seed articles' pitfalls, found in hand-written TensorFlow training loops.

Static analysis of the AST only: nothing is imported or run (not TensorFlow, not the linted code).
Precision over recall: each rule reports only what it can see for certain in one file, and stays
quiet when a name, a function or a pipeline comes from somewhere it cannot read.

A finding is `path:line:col: TFGnnn message` (line and column 1-based). `# tfgen: ignore[TFG001]`
(or `ignore[TFG001,TFG002]`) on the finding's line suppresses it.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

# code: (short name, message: why, and what to do instead)
RULES: dict[str, tuple[str, str]] = {
    "TFG001": ("tensor-accumulated-in-python-list",
               "tensor returned by a tf.function/train step kept in a Python container across iterations: "
               "memory grows every step; aggregate in the graph or a keras metric, or keep `.numpy()`/float values"),
    "TFG002": ("print-in-tf-function",
               "`print` inside a tf.function runs once, at trace time; use `tf.print` (or tf.summary to keep values)"),
    "TFG003": ("numpy-in-graph-or-tape",
               "`{what}` inside {where} {why}; keep the value a tensor (tf ops), convert outside the step"),
    "TFG004": ("dataset-without-prefetch",
               "tf.data pipeline `{name}` is iterated for training without `prefetch`: the accelerator waits for "
               "each batch; end the pipeline with `.prefetch(tf.data.AUTOTUNE)`"),
    "TFG005": ("shuffle-after-batch",
               "`shuffle` after `batch` only reorders whole batches of the same examples; shuffle before `batch`"),
    "TFG006": ("cache-after-random-map",
               "`cache()` after a random augmentation map freezes the first epoch's random draw; cache before "
               "the random `map`"),
    "TFG007": ("created-outside-strategy-scope",
               "{what} created outside `{strategy}.scope()`: its variables are not mirrored across replicas; "
               "create it inside `with {strategy}.scope():`"),
    "TFG008": ("per-replica-mean-loss",
               "{what} inside the function run by `strategy.run` averages over this replica's batch only, so "
               "gradients scale with the replica count; use a per-example loss (reduction=None) and "
               "`tf.nn.compute_average_loss(..., global_batch_size=...)`"),
    "TFG009": ("unscaled-regularization-loss",
               "regularization losses added inside `strategy.run` are summed once per replica; add "
               "`tf.nn.scale_regularization_loss(tf.add_n(model.losses))` instead"),
    "TFG010": ("optimizer-clipping-per-replica",
               "optimizer `{kw}` under a tf.distribute strategy clips each replica's gradients separately; clip "
               "the all-reduced gradients (e.g. `tf.clip_by_global_norm`) in the step"),
    "TFG011": ("mixed-precision-without-loss-scaling",
               "`mixed_float16` in a custom loop with no `LossScaleOptimizer`: float16 gradients underflow to "
               "zero; wrap the optimizer in `keras.mixed_precision.LossScaleOptimizer`"),
    "TFG012": ("float16-final-activation",
               "final `{act}` computes in float16 under `mixed_float16` and can overflow; give the output layer "
               "`dtype=\"float32\"`"),
    "TFG013": ("model-losses-outside-tape",
               "`model.losses` read outside the GradientTape block: the tape does not record it and the "
               "regularizers get no gradient; read it inside the `with tf.GradientTape()` block"),
    "TFG014": ("regularizers-never-added",
               "the model has regularizers (line {line}) but this custom step never adds `model.losses`: they "
               "have no effect; add `tf.add_n(model.losses)` to the loss inside the tape"),
    "TFG015": ("checkpoint-without-optimizer",
               "{what} saves the model but not the optimizer: a resumed run loses the optimizer state (Adam's "
               "moments, the step); use `tf.train.Checkpoint(model=..., optimizer=...)` with a CheckpointManager"),
    "TFG016": ("python-number-to-tf-function",
               "Python number `{name}` changes every call of tf.function `{fn}`: it retraces each time; pass "
               "`tf.constant({name})` (or a tf.Variable)"),
    "TFG017": ("persistent-tape-not-deleted",
               "`persistent=True` tape `{tape}` is never deleted: it holds every intermediate tensor of the "
               "step; drop `persistent=True`, or `del {tape}` after the last `gradient` call"),
}

IGNORE_COMMENT = re.compile(r"#\s*tfgen:\s*ignore\[([A-Za-z0-9_,\s]+)\]")
SKIP_DIRS = {"__pycache__", "node_modules", "site-packages"}


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    column: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"


class LintInputError(Exception):
    """A path that cannot be read or parsed (exit 2), already located."""


# --------------------------------------------------------------------------- helpers

def dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _walk_local(node):
    """Nodes of a function or block, not descending into nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(child))


def _kw(call: ast.Call, name: str):
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword
    return None


def _const(node):
    return node.value if isinstance(node, ast.Constant) else None


FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


class FileContext:
    """One parsed file, with the name resolution the rules share."""

    def __init__(self, path: str, source: str, tree: ast.Module):
        self.path, self.source, self.tree = path, source, tree
        self.findings: list[Finding] = []
        self.parent: dict[ast.AST, ast.AST] = {}
        self.nodes: list[ast.AST] = []
        for node in ast.walk(tree):
            self.nodes.append(node)
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self.aliases = self._aliases()
        self.calls = [n for n in self.nodes if isinstance(n, ast.Call)]
        self.defs: dict[str, list[ast.AST]] = {}
        self.methods: dict[str, list[ast.AST]] = {}
        for node in self.nodes:
            if isinstance(node, FUNCS):
                owner = self.parent.get(node)
                (self.methods if isinstance(owner, ast.ClassDef) else self.defs).setdefault(node.name, []).append(node)
        self.tf_functions, self.traced = self._tf_functions()
        self.tapes = self._tapes()
        self.attr_names = {n.attr for n in self.nodes if isinstance(n, ast.Attribute)} | {
            n.id for n in self.nodes if isinstance(n, ast.Name)}

    # names -----------------------------------------------------------------
    def _aliases(self) -> dict[str, str]:
        aliases = {}
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        return aliases

    def canonical(self, node) -> str | None:
        """The dotted name with import aliases resolved; tensorflow -> tf, tf.keras -> keras."""
        name = dotted(node)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        if head in self.aliases:
            name = self.aliases[head] + ("." + rest if rest else "")
        if name == "tensorflow" or name.startswith("tensorflow."):
            name = "tf" + name[len("tensorflow"):]
        for prefix in ("tf.keras.", "tf.compat.v2.keras."):
            if name.startswith(prefix):
                name = "keras." + name[len(prefix):]
        if name.startswith("keras.src."):
            name = "keras." + name[len("keras.src."):]
        return name

    def func_name(self, call: ast.Call) -> str | None:
        return self.canonical(call.func)

    # functions ---------------------------------------------------------------
    def enclosing_function(self, node):
        node = self.parent.get(node)
        while node is not None and not isinstance(node, FUNCS):
            node = self.parent.get(node)
        return node

    def enclosing_class(self, node):
        node = self.parent.get(node)
        while node is not None and not isinstance(node, ast.ClassDef):
            node = self.parent.get(node)
        return node

    def resolve_function(self, expr) -> list:
        """Local definitions that `expr` (a callee) may name: `f` or `self.f`."""
        if isinstance(expr, ast.Name):
            return self.defs.get(expr.id, [])
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return self.methods.get(expr.attr, [])
        return []

    def _is_tf_function_decorator(self, decorator) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.canonical(target) in ("tf.function", "tf.compat.v2.function")

    def _tf_functions(self):
        names, traced = set(), set()
        for node in self.nodes:
            if isinstance(node, FUNCS) and any(self._is_tf_function_decorator(d) for d in node.decorator_list):
                names.add(node.name)
                traced.add(node)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                call = node.value
                wrapped = None
                if self.canonical(call.func) == "tf.function" and call.args or (isinstance(call.func, ast.Call) and self.canonical(call.func.func) == "tf.function"
                      and call.args):
                    wrapped = call.args[0]
                if wrapped is not None:
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            names.add(target.id)
                        elif isinstance(target, ast.Attribute):
                            names.add(target.attr)
                    traced.update(self.resolve_function(wrapped))
        # Functions called (or run by strategy.run) from traced code are traced too.
        queue = list(traced)
        while queue:
            function = queue.pop()
            for node in ast.walk(function):
                if node is not function and isinstance(node, FUNCS) and node not in traced:
                    traced.add(node)
                    queue.append(node)
                if not isinstance(node, ast.Call):
                    continue
                callees = self.resolve_function(node.func)
                if self.is_strategy_run(node) and node.args:
                    callees = callees + self.resolve_function(node.args[0])
                for callee in callees:
                    if callee not in traced:
                        traced.add(callee)
                        queue.append(callee)
        return names, traced

    def is_tf_function_call(self, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.tf_functions:
            return func.id
        if isinstance(func, ast.Attribute) and func.attr in self.tf_functions and any(
                m.name == func.attr and m in self.traced and any(
                    self._is_tf_function_decorator(d) for d in m.decorator_list)
                for m in self.methods.get(func.attr, [])):
            return func.attr
        if (isinstance(func, ast.Attribute) and func.attr in self.tf_functions
                and not self.methods.get(func.attr)):
            return func.attr  # e.g. `self.step = tf.function(self._step)`
        return None

    def is_strategy_run(self, call: ast.Call) -> bool:
        func = call.func
        return (isinstance(func, ast.Attribute) and func.attr in ("run", "experimental_run_v2")
                and "strategy" in (dotted(func.value) or "").lower())

    def is_step_call(self, call: ast.Call) -> bool:
        func = call.func
        if self.is_tf_function_call(call) or self.is_strategy_run(call):
            return True
        return (isinstance(func, ast.Attribute) and func.attr == "reduce"
                and "strategy" in (dotted(func.value) or "").lower())

    # tapes -------------------------------------------------------------------
    def _tapes(self):
        """(with-node, tape name or None, GradientTape call) of each `with tf.GradientTape()` block."""
        tapes = []
        for node in self.nodes:
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    expr = item.context_expr
                    if isinstance(expr, ast.Call) and self.func_name(expr) in (
                            "tf.GradientTape", "tf.autodiff.GradientTape"):
                        name = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
                        tapes.append((node, name, expr))
        return tapes

    def in_tape(self, node) -> bool:
        node = self.parent.get(node)
        while node is not None and not isinstance(node, FUNCS):
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(w is node for w, _, _ in self.tapes):
                return True
            node = self.parent.get(node)
        return False

    def in_traced(self, node) -> bool:
        function = self.enclosing_function(node)
        while function is not None:
            if function in self.traced:
                return True
            function = self.enclosing_function(function)
        return False

    def report(self, node, code: str, **fields) -> None:
        message = RULES[code][1].format(**fields) if fields else RULES[code][1]
        self.findings.append(Finding(self.path, node.lineno, node.col_offset + 1, code, message))


def _scopes(ctx: FileContext):
    yield ctx.tree
    for node in ctx.nodes:
        if isinstance(node, FUNCS):
            yield node


def _last_assignment(scope, name: str, before_line: int):
    """The value last assigned to `name` in `scope` (locally) before `before_line`."""
    best = None
    for node in _walk_local(scope):
        if isinstance(node, ast.Assign) and node.lineno < before_line:
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name:
                    if best is None or node.lineno >= best.lineno:
                        best = node
    return best.value if best is not None else None


# --------------------------------------------------------------------------- rules

def rule_accumulate(ctx: FileContext):
    """TFG001: `container.append(step(...))` (or of a name just assigned from it) in a loop."""
    for loop in ctx.nodes:
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        body = [n for stmt in loop.body for n in [stmt, *_walk_local(stmt)]]
        for call in body:
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "append" and len(call.args) == 1):
                continue
            if ctx.parent.get(call) is not None and _innermost_loop(ctx, call) is not loop:
                continue  # reported for the innermost loop only
            value = call.args[0]
            if isinstance(value, ast.Name):
                value = _last_in(body, value.id, call.lineno)
            if isinstance(value, ast.Subscript):
                value = value.value
            if isinstance(value, ast.Call) and ctx.is_step_call(value):
                ctx.report(call, "TFG001")


def _innermost_loop(ctx, node):
    node = ctx.parent.get(node)
    while node is not None and not isinstance(node, (ast.For, ast.While) + FUNCS):
        node = ctx.parent.get(node)
    return node


def _last_in(nodes, name, before_line):
    best = None
    for node in nodes:
        if isinstance(node, ast.Assign) and node.lineno <= before_line:
            for target in node.targets:
                names = [target] if isinstance(target, ast.Name) else (
                    target.elts if isinstance(target, ast.Tuple) else [])
                if any(isinstance(t, ast.Name) and t.id == name for t in names):
                    if best is None or node.lineno >= best.lineno:
                        best = node
    return best.value if best is not None else None


def rule_print(ctx: FileContext):
    """TFG002: Python `print` in traced code."""
    for call in ctx.calls:
        if isinstance(call.func, ast.Name) and call.func.id == "print" and ctx.in_traced(call):
            ctx.report(call, "TFG002")


NOT_TENSOR_MODULES = {"config", "distribute", "data", "io", "saved_model", "train", "summary", "debugging",
                      "random", "experimental", "compat", "sysconfig", "test", "errors", "dtypes", "version"}


def _tensorish(ctx: FileContext, expr, scope, depth=0) -> bool:
    if depth > 3:
        return False
    if isinstance(expr, ast.Subscript):
        return _tensorish(ctx, expr.value, scope, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _tensorish(ctx, expr.left, scope, depth + 1) or _tensorish(ctx, expr.right, scope, depth + 1)
    if isinstance(expr, ast.Name) and scope is not None:
        value = _last_assignment(scope, expr.id, expr.lineno + 1)
        return value is not None and value is not expr and _tensorish(ctx, value, scope, depth + 1)
    if isinstance(expr, ast.Call):
        name = ctx.func_name(expr) or ""
        parts = name.split(".")
        if parts[0] == "tf" and len(parts) >= 2 and parts[-1][:1].islower() and parts[1] not in NOT_TENSOR_MODULES:
            return parts[-1] not in ("executing_eagerly", "function", "GradientTape", "Variable", "device",
                                     "name_scope", "constant")
        last = parts[-1].lower() if parts[-1] else ""
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "gradient":
            return True
        return "model" in last or "loss" in last  # a model or a loss applied to tensors
    return False


def rule_numpy(ctx: FileContext):
    """TFG003: `.numpy()`, `float(t)`, `int(t)` in traced code or in a GradientTape block."""
    for call in ctx.calls:
        what = None
        if isinstance(call.func, ast.Attribute) and call.func.attr == "numpy" and not call.args:
            what = ".numpy()"
        elif (isinstance(call.func, ast.Name) and call.func.id in ("float", "int") and len(call.args) == 1
              and _tensorish(ctx, call.args[0], ctx.enclosing_function(call))):
            what = f"{call.func.id}()"
        if what is None:
            continue
        if ctx.in_traced(call):
            ctx.report(call, "TFG003", what=what, where="a tf.function",
                       why="cannot convert a symbolic tensor (it fails or freezes one traced value)")
        elif ctx.in_tape(call):
            ctx.report(call, "TFG003", what=what, where="a GradientTape block",
                       why="leaves the graph: the tape cannot follow it and gradients become None")


# tf.data -------------------------------------------------------------------

BATCH_OPS = {"batch", "padded_batch", "ragged_batch"}


def _chain(ctx: FileContext, expr, known: dict):
    """(root-name or None, [(op, call)]) of a tf.data method chain, or None when not a pipeline."""
    ops = []
    node = expr
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        name = ctx.func_name(node) or ""
        if name.startswith("tf.data."):
            return list(reversed(ops))
        if "strategy" in (dotted(node.func.value) or "").lower() and node.func.attr in (
                "experimental_distribute_dataset", "distribute_datasets_from_function") and node.args:
            node = node.args[0]
            continue
        ops.append((node.func.attr, node))
        node = node.func.value
    if isinstance(node, ast.Call) and (ctx.func_name(node) or "").startswith("tf.data."):
        return list(reversed(ops))
    if isinstance(node, ast.Name) and node.id in known:
        return known[node.id] + list(reversed(ops))
    return None


def rule_datasets(ctx: FileContext):
    """TFG004 (no prefetch before a training loop), TFG005 (shuffle after batch), TFG006 (cache after random map)."""
    reported = set()
    for scope in _scopes(ctx):
        # An assignment takes effect after its value (`ds = ds.shuffle(...)` reads the old `ds`).
        local = sorted((n for n in _walk_local(scope) if isinstance(n, (ast.Assign, ast.For, ast.Call))),
                       key=lambda n: (n.end_lineno, n.end_col_offset, 1) if isinstance(n, ast.Assign)
                       else (n.lineno, n.col_offset, 0))
        known: dict[str, list] = {}
        for node in local:
            if isinstance(node, ast.Call):
                parent = ctx.parent.get(node)
                if isinstance(parent, ast.Attribute):
                    continue  # not the top of a chain
                ops = _chain(ctx, node, known)
                if ops:
                    _check_order(ctx, ops, reported)
            elif isinstance(node, ast.Assign):
                ops = _chain(ctx, node.value, known)
                if ops is None and isinstance(node.value, ast.Call) and (
                        ctx.func_name(node.value) or "").startswith("tf.data."):
                    ops = []
                if ops is None and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                        and node.value.func.id == "iter" and node.value.args:
                    ops = _chain(ctx, node.value.args[0], known)
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        if ops is not None:
                            known[target.id] = ops
                        else:
                            known.pop(target.id, None)
            elif isinstance(node, ast.For):
                source = node.iter
                if isinstance(source, ast.Call) and isinstance(source.func, ast.Name) and source.func.id in (
                        "enumerate", "iter") and source.args:
                    source = source.args[0]
                if not (isinstance(source, ast.Name) and source.id in known):
                    continue
                if any(op == "prefetch" for op, _ in known[source.id]):
                    continue
                if _trains(ctx, node):
                    ctx.report(node.iter, "TFG004", name=source.id)


def _check_order(ctx, ops, reported):
    batched, random_map = False, False
    for op, call in ops:
        if op in BATCH_OPS:
            batched = True
        elif op == "unbatch":
            batched = False
        elif op == "shuffle" and batched and id(call) not in reported:
            reported.add(id(call))
            _report_attr(ctx, call, "TFG005")
        elif op == "map" and call.args and _is_random_fn(ctx, call.args[0]):
            random_map = True
        elif op == "cache" and random_map and id(call) not in reported:
            reported.add(id(call))
            _report_attr(ctx, call, "TFG006")


def _report_attr(ctx, call, code):
    """Locate a `.method(...)` finding at the method name (where a chained call starts)."""
    func = call.func
    end_line, end_col = func.value.end_lineno, func.value.end_col_offset
    line = ctx.source.splitlines()[end_line - 1] if end_line else ""
    col = line.find(func.attr, end_col) if end_line == func.end_lineno else -1
    if col < 0:
        ctx.findings.append(Finding(ctx.path, func.end_lineno, func.end_col_offset - len(func.attr) + 1, code,
                                    RULES[code][1]))
    else:
        ctx.findings.append(Finding(ctx.path, end_line, col + 1, code, RULES[code][1]))


def _is_random_fn(ctx: FileContext, fn) -> bool:
    bodies = [fn] if isinstance(fn, ast.Lambda) else ctx.resolve_function(fn)
    for body in bodies:
        for node in ast.walk(body):
            if isinstance(node, ast.Call):
                name = ctx.func_name(node) or ""
                last = name.split(".")[-1]
                if name.startswith("tf.random.") and "stateless" not in name and last != "set_seed":
                    return True
                if name.startswith("tf.image.random_"):
                    return True
                if name.startswith("keras.layers.Random") or (last.startswith("Random") and "layers" in name):
                    return True
    return False


def _trains(ctx: FileContext, loop) -> bool:
    for node in _walk_local(loop):
        if isinstance(node, ast.Call):
            if ctx.is_step_call(node):
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("apply_gradients", "minimize"):
                return True
            name = dotted(node.func) or ""
            if "train_step" in name.split(".")[-1]:
                return True
    return False


# strategies ------------------------------------------------------------------

def _is_strategy_ctor(ctx, call) -> bool:
    name = ctx.func_name(call) or ""
    return name.startswith("tf.distribute.") and name.endswith("Strategy") and name.split(".")[-1] != "Strategy"


def _creation(ctx: FileContext, call) -> str | None:
    """'a model', 'an optimizer' or 'a metric' when `call` creates one (visibly)."""
    name = ctx.func_name(call) or ""
    last = name.split(".")[-1]
    if name in ("keras.Sequential", "keras.Model", "keras.models.Sequential", "keras.models.Model",
                "keras.models.load_model") or name.startswith("keras.applications."):
        return "a model"
    if name.startswith("keras.optimizers.") and last[:1].isupper() and "schedules" not in name:
        return "an optimizer"
    if name.startswith("keras.metrics.") and last[:1].isupper():
        return "a metric"
    if isinstance(call.func, ast.Name):
        for node in ctx.nodes:
            if isinstance(node, ast.ClassDef) and node.name == call.func.id and any(
                    ctx.canonical(b) in ("keras.Model", "keras.models.Model") for b in node.bases):
                return "a model"
        for function in ctx.defs.get(call.func.id, []):
            for inner in _walk_local(function):
                if isinstance(inner, ast.Call) and inner is not call and not _in_scope_block(ctx, inner):
                    made = _creation_direct(ctx, inner)
                    if made:
                        return made
    return None


def _creation_direct(ctx, call):
    name = ctx.func_name(call) or ""
    if name in ("keras.Sequential", "keras.Model", "keras.models.Sequential", "keras.models.Model") \
            or name.startswith("keras.applications."):
        return "a model"
    return None


def rule_strategy_scope(ctx: FileContext):
    """TFG007: model/optimizer/metric created after a strategy, in the same scope, outside `scope()`."""
    for scope in _scopes(ctx):
        strategy = None
        for node in sorted((n for n in _walk_local(scope) if isinstance(n, ast.Assign)),
                           key=lambda n: n.lineno):
            if isinstance(node.value, ast.Call) and _is_strategy_ctor(ctx, node.value) and \
                    isinstance(node.targets[0], ast.Name):
                strategy = node
                break
        if strategy is None:
            continue
        name = strategy.targets[0].id
        for call in _walk_local(scope):
            if not isinstance(call, ast.Call) or call.lineno <= strategy.lineno:
                continue
            what = _creation(ctx, call)
            if what and not _in_scope_block(ctx, call) and not _nested_creation(ctx, call):
                ctx.report(call, "TFG007", what=what[0].upper() + what[1:], strategy=name)


def _nested_creation(ctx, call):
    """An optimizer built inside another creation call (e.g. LossScaleOptimizer(Adam())): report the outer."""
    parent = ctx.parent.get(call)
    while isinstance(parent, (ast.keyword, ast.Call, ast.List, ast.Tuple)):
        if isinstance(parent, ast.Call) and _creation(ctx, parent):
            return True
        parent = ctx.parent.get(parent)
    return False


def _in_scope_block(ctx, node) -> bool:
    node = ctx.parent.get(node)
    while node is not None and not isinstance(node, FUNCS):
        if isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                expr = item.context_expr
                if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "scope":
                    return True
        node = ctx.parent.get(node)
    return False


def _run_functions(ctx: FileContext):
    seen = []
    for call in ctx.calls:
        if ctx.is_strategy_run(call) and call.args:
            for function in ctx.resolve_function(call.args[0]):
                if function not in seen:
                    seen.append(function)
    return seen


def _default_reduction_losses(ctx: FileContext) -> set[str]:
    names = set()
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            name = ctx.func_name(node.value) or ""
            if not (name.startswith("keras.losses.") and name.split(".")[-1][:1].isupper()):
                continue
            reduction = _kw(node.value, "reduction")
            if reduction is not None:
                value = reduction.value
                text = str(_const(value) if isinstance(value, ast.Constant) else dotted(value) or "")
                if text.split(".")[-1].lower() not in ("auto", "sum_over_batch_size", "mean"):
                    continue  # None, "none", "sum" or unknown: not a per-replica mean (or cannot tell)
            for target in node.targets:
                key = dotted(target)
                if key:
                    names.add(key)
    return names


def _top_terms(expr):
    """Calls and names at the top of an arithmetic expression."""
    if isinstance(expr, ast.BinOp):
        return _top_terms(expr.left) + _top_terms(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _top_terms(expr.operand)
    return [expr]


def rule_per_replica_loss(ctx: FileContext):
    """TFG008: the loss whose gradient a strategy.run function takes is a per-replica mean."""
    default_losses = _default_reduction_losses(ctx)
    for function in _run_functions(ctx):
        targets = [c.args[0] for c in _walk_local(function) if isinstance(c, ast.Call)
                   and isinstance(c.func, ast.Attribute) and c.func.attr == "gradient" and c.args]
        seen_names, found = set(), []
        queue = [t for t in targets]
        while queue:
            expr = queue.pop()
            for term in _top_terms(expr):
                if isinstance(term, ast.Name) and term.id not in seen_names:
                    seen_names.add(term.id)
                    for node in _walk_local(function):
                        if isinstance(node, ast.Assign) and any(
                                isinstance(t, ast.Name) and t.id == term.id for t in node.targets) or isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) \
                                and node.target.id == term.id:
                            queue.append(node.value)
                elif isinstance(term, ast.Call):
                    found.extend(_mean_calls(ctx, term, default_losses))
        for call, what in found:
            ctx.report(call, "TFG008", what=what)


def _mean_calls(ctx, call, default_losses, depth=0):
    name = ctx.func_name(call) or ""
    if name in ("tf.reduce_mean", "tf.math.reduce_mean", "keras.ops.mean"):
        axis = _kw(call, "axis")
        axis_value = axis.value if axis else (call.args[1] if len(call.args) > 1 else None)
        if axis_value is None or _const(axis_value) in (0,) or (
                isinstance(axis_value, ast.Constant) and axis_value.value is None):
            return [(call, "`tf.reduce_mean` of the loss")]
        return []
    if dotted(call.func) in default_losses:
        return [(call, f"Keras loss `{dotted(call.func)}` with its default reduction (a mean)")]
    if depth == 0 and isinstance(call.func, ast.Name):
        results = []
        for function in ctx.defs.get(call.func.id, []):
            for node in _walk_local(function):
                if isinstance(node, ast.Return) and node.value is not None:
                    for term in _top_terms(node.value):
                        if isinstance(term, ast.Call):
                            results.extend(_mean_calls(ctx, term, default_losses, depth + 1))
        return results
    return []


def _is_model_losses(node) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "losses" and isinstance(node.ctx, ast.Load)
            and "model" in (dotted(node.value) or "").lower())


def rule_regularization_scaling(ctx: FileContext):
    """TFG009: `model.losses` added to the loss in a strategy.run function without scaling."""
    for function in _run_functions(ctx):
        local = list(_walk_local(function))
        for node in local:
            if not _is_model_losses(node):
                continue
            added, name, parent = False, None, ctx.parent.get(node)
            while parent is not None and not isinstance(parent, ast.stmt):
                if isinstance(parent, ast.Call) and (ctx.func_name(parent) or "").endswith("scale_regularization_loss"):
                    break
                if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
                    added = True
                parent = ctx.parent.get(parent)
            else:
                if isinstance(parent, ast.AugAssign) and isinstance(parent.op, ast.Add):
                    added = True
                elif isinstance(parent, ast.Assign) and len(parent.targets) == 1 and \
                        isinstance(parent.targets[0], ast.Name):
                    name = parent.targets[0].id
                if name and not added:
                    added = _added_unscaled(ctx, local, name, parent.lineno)
                if added:
                    ctx.report(node, "TFG009")


def _added_unscaled(ctx, local, name, after_line):
    for use in local:
        if isinstance(use, ast.Name) and use.id == name and isinstance(use.ctx, ast.Load) and use.lineno > after_line:
            parent = ctx.parent.get(use)
            scaled = False
            probe = parent
            while probe is not None and not isinstance(probe, ast.stmt):
                if isinstance(probe, ast.Call) and (ctx.func_name(probe) or "").endswith("scale_regularization_loss"):
                    scaled = True
                probe = ctx.parent.get(probe)
            if scaled:
                return False
            if (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add)) or (
                    isinstance(parent, ast.AugAssign) and isinstance(parent.op, ast.Add)):
                return True
    return False


def rule_optimizer_clipping(ctx: FileContext):
    """TFG010: clipnorm/clipvalue on an optimizer in a file that builds a tf.distribute strategy
    of several replicas (OneDeviceStrategy's one replica sees the whole gradient)."""
    if not any(_is_strategy_ctor(ctx, c) and not ctx.func_name(c).endswith(".OneDeviceStrategy") for c in ctx.calls):
        return
    for call in ctx.calls:
        name = ctx.func_name(call) or ""
        if name.startswith("keras.optimizers.") and name.split(".")[-1][:1].isupper():
            for keyword in call.keywords:
                if keyword.arg in ("clipnorm", "clipvalue") and _const(keyword.value) is not None:
                    ctx.report(keyword, "TFG010", kw=keyword.arg)


# mixed precision -------------------------------------------------------------

def _mixed_policy_calls(ctx):
    for call in ctx.calls:
        last = (ctx.func_name(call) or "").split(".")[-1]
        if last in ("set_global_policy", "set_policy", "Policy", "set_dtype_policy") and call.args and \
                _const(call.args[0]) == "mixed_float16":
            yield call


def _custom_loop(ctx) -> bool:
    return bool(ctx.tapes) and any(isinstance(c.func, ast.Attribute) and c.func.attr == "apply_gradients"
                                   for c in ctx.calls)


def rule_loss_scaling(ctx: FileContext):
    """TFG011: mixed_float16 in a custom loop with no LossScaleOptimizer anywhere in the file."""
    if not _custom_loop(ctx) or "LossScaleOptimizer" in ctx.attr_names:
        return
    for call in _mixed_policy_calls(ctx):
        ctx.report(call, "TFG011")


FLOAT32 = ("float32", "float64", "tf.float32", "tf.float64")


def _final_activation(ctx, layer) -> str | None:
    """'softmax'/'sigmoid' when the layer constructor `layer` applies one in the policy's dtype."""
    if not isinstance(layer, ast.Call):
        return None
    dtype = _kw(layer, "dtype")
    if dtype is not None and (_const(dtype.value) in FLOAT32 or ctx.canonical(dtype.value) in FLOAT32):
        return None
    name = (ctx.func_name(layer) or "").split(".")[-1]
    if name == "Softmax":
        return "softmax"
    activation = _kw(layer, "activation")
    value = activation.value if activation else None
    if value is None and name == "Activation" and layer.args:
        value = layer.args[0]
    if value is None and name == "Dense" and len(layer.args) > 1:
        value = layer.args[1]
    text = _const(value) if isinstance(value, ast.Constant) else (ctx.canonical(value) if value is not None else None)
    if isinstance(text, str) and text.split(".")[-1] in ("softmax", "sigmoid"):
        return text.split(".")[-1]
    return None


def rule_float16_output(ctx: FileContext):
    """TFG012: the output layer's softmax/sigmoid computes in float16 under mixed_float16."""
    if not any(True for _ in _mixed_policy_calls(ctx)):
        return
    for call in ctx.calls:
        name = ctx.func_name(call) or ""
        last_layers = []
        if name in ("keras.Sequential", "keras.models.Sequential") and call.args and \
                isinstance(call.args[0], (ast.List, ast.Tuple)) and call.args[0].elts:
            last_layers.append(call.args[0].elts[-1])
        elif name in ("keras.Model", "keras.models.Model"):
            outputs = _kw(call, "outputs")
            outputs = outputs.value if outputs else (call.args[1] if len(call.args) > 1 else None)
            exprs = outputs.values if isinstance(outputs, ast.Dict) else (
                outputs.elts if isinstance(outputs, (ast.List, ast.Tuple)) else [outputs] if outputs else [])
            scope = ctx.enclosing_function(call) or ctx.tree
            for expr in exprs:
                if isinstance(expr, ast.Name):
                    expr = _last_assignment(scope, expr.id, call.lineno)
                if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Call):
                    last_layers.append(expr.func)
        for layer in last_layers:
            activation = _final_activation(ctx, layer)
            if activation:
                ctx.report(layer, "TFG012", act=activation)


# model.losses ----------------------------------------------------------------

def rule_model_losses(ctx: FileContext):
    """TFG013 (model.losses read outside the tape, before the gradient) and TFG014 (never read)."""
    by_function = {}
    for with_node, name, _ in ctx.tapes:
        function = ctx.enclosing_function(with_node)
        by_function.setdefault(function, []).append((with_node, name))
    for function, tapes in by_function.items():
        scope = function or ctx.tree
        names = {name for _, name in tapes if name}
        gradient_lines = [c.lineno for c in _walk_local(scope) if isinstance(c, ast.Call)
                          and isinstance(c.func, ast.Attribute) and c.func.attr == "gradient"
                          and isinstance(c.func.value, ast.Name) and c.func.value.id in names]
        if not gradient_lines:
            continue
        for node in _walk_local(scope):
            if _is_model_losses(node) and not ctx.in_tape(node) and node.lineno <= max(gradient_lines):
                ctx.report(node, "TFG013")
    # Regularizers visible, and no step ever reads model.losses (or a regularization helper).
    regularizer = next((k for c in ctx.calls for k in c.keywords if k.arg in (
        "kernel_regularizer", "bias_regularizer", "activity_regularizer")
        and not (isinstance(k.value, ast.Constant) and k.value.value is None)), None)
    if regularizer is None:
        return
    if any(isinstance(n, ast.Attribute) and n.attr == "losses" and (ctx.canonical(n.value) or "").split(".")[0]
           not in ("keras", "tf") for n in ctx.nodes):
        return  # some object's `.losses` is read: maybe the model's, under another name
    for call in ctx.calls:
        name = ctx.canonical(call.func) or ""
        if "regulari" in name.lower() and not name.startswith("keras.regularizers"):
            return
    for function, tapes in by_function.items():
        names = {name for _, name in tapes if name}
        for call in _walk_local(function or ctx.tree):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "gradient" \
                    and isinstance(call.func.value, ast.Name) and call.func.value.id in names:
                ctx.report(call, "TFG014", line=regularizer.lineno)


# checkpoints -------------------------------------------------------------------

def _optimizerish(ctx, node) -> bool:
    return "optim" in (dotted(node) or "").lower() or (isinstance(node, ast.Call) and "optimizers" in (
        ctx.func_name(node) or ""))


def rule_checkpoint(ctx: FileContext):
    """TFG015: a checkpoint of the model without the optimizer, in a file with a training step."""
    if not any(isinstance(c.func, ast.Attribute) and c.func.attr in ("apply_gradients", "minimize")
               for c in ctx.calls):
        return
    checkpoints = [c for c in ctx.calls if ctx.func_name(c) in ("tf.train.Checkpoint", "tf.compat.v2.train.Checkpoint")]
    full = [c for c in checkpoints if any(k.arg is None or "optim" in (k.arg or "").lower()
                                          or _optimizerish(ctx, k.value) for k in c.keywords)]
    if full:
        return
    for call in checkpoints:
        if any(k.arg == "model" or "model" in (dotted(k.value) or "").lower() for k in call.keywords):
            ctx.report(call, "TFG015", what="`tf.train.Checkpoint` without `optimizer=`")
    if checkpoints or any(isinstance(c.func, ast.Attribute) and c.func.attr == "save"
                          and "model" in (dotted(c.func.value) or "").lower() for c in ctx.calls):
        return
    for call in ctx.calls:
        if isinstance(call.func, ast.Attribute) and call.func.attr == "save_weights" and \
                _innermost_loop(ctx, call) is not None and isinstance(_innermost_loop(ctx, call), (ast.For, ast.While)):
            ctx.report(call, "TFG015", what="`save_weights`, the training loop's only checkpoint,")


# retracing ---------------------------------------------------------------------

def _loop_counters(loop) -> set[str]:
    source = loop.iter
    if not (isinstance(source, ast.Call) and isinstance(source.func, ast.Name)):
        return set()
    if source.func.id == "range" and isinstance(loop.target, ast.Name):
        return {loop.target.id}
    if source.func.id == "enumerate" and isinstance(loop.target, ast.Tuple) and loop.target.elts and \
            isinstance(loop.target.elts[0], ast.Name):
        return {loop.target.elts[0].id}
    return set()


def _python_number_of(expr, counters) -> str | None:
    if isinstance(expr, ast.Name) and expr.id in counters:
        return expr.id
    if isinstance(expr, ast.BinOp):
        terms = _top_terms(expr)
        if all(isinstance(t, (ast.Name, ast.Constant)) for t in terms):
            hits = [t.id for t in terms if isinstance(t, ast.Name) and t.id in counters]
            if hits:
                return hits[0]
    return None


def rule_retrace(ctx: FileContext):
    """TFG016: a `for i in range(...)` counter passed straight to a tf.function."""
    for loop in ctx.nodes:
        if not isinstance(loop, ast.For):
            continue
        counters = _loop_counters(loop)
        if not counters or ctx.in_traced(loop):
            continue  # a Python loop inside a tf.function is unrolled, not a retrace per call
        for call in (n for stmt in loop.body for n in [stmt, *_walk_local(stmt)]):
            if not isinstance(call, ast.Call):
                continue
            fn = ctx.is_tf_function_call(call)
            if not fn:
                continue
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                name = _python_number_of(arg, counters)
                if name:
                    ctx.report(arg, "TFG016", name=name, fn=fn)


def rule_persistent_tape(ctx: FileContext):
    """TFG017: a persistent tape whose gradients reach apply_gradients, never deleted."""
    for with_node, name, call in ctx.tapes:
        persistent = _kw(call, "persistent")
        if not name or persistent is None or _const(persistent.value) is not True:
            continue
        scope = ctx.enclosing_function(with_node) or ctx.tree
        local = list(_walk_local(scope))
        if any(isinstance(n, ast.Delete) and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
               for n in local):
            continue
        gradient_names, direct = set(), False
        for node in local:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "gradient" and \
                    dotted(node.value.func.value) == name:
                for target in node.targets:
                    gradient_names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        for node in local:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "apply_gradients":
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Name) and inner.id in gradient_names:
                        direct = True
                    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and \
                            inner.func.attr == "gradient" and dotted(inner.func.value) == name:
                        direct = True
        if direct:
            ctx.report(call, "TFG017", tape=name)


ALL_RULES = (rule_accumulate, rule_print, rule_numpy, rule_datasets, rule_strategy_scope, rule_per_replica_loss,
             rule_regularization_scaling, rule_optimizer_clipping, rule_loss_scaling, rule_float16_output,
             rule_model_losses, rule_checkpoint, rule_retrace, rule_persistent_tape)


# --------------------------------------------------------------------------- driver

def _ignored(source_lines: list[str], finding: Finding) -> bool:
    if finding.line - 1 >= len(source_lines):
        return False
    match = IGNORE_COMMENT.search(source_lines[finding.line - 1])
    if not match:
        return False
    codes = {c.strip().upper() for c in match.group(1).split(",")}
    return finding.code in codes


def lint_source(source: str, path: str = "<string>") -> list[Finding]:
    """All findings of one file's text (before --select/--ignore); SyntaxError propagates."""
    tree = ast.parse(source, filename=path)
    ctx = FileContext(path, source, tree)
    for rule in ALL_RULES:
        rule(ctx)
    lines = source.splitlines()
    return sorted({f for f in ctx.findings if not _ignored(lines, f)})


def python_files(paths) -> list[Path]:
    files = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for root, dirs, names in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS
                                 and not d.endswith(".egg-info"))
                files.extend(Path(root) / n for n in sorted(names) if n.endswith(".py"))
        elif path.exists():
            files.append(path)
        else:
            raise LintInputError(f"{raw}: error: no such file or directory")
    return files


def lint_paths(paths, select=None, ignore=None) -> tuple[list[Finding], list[str], int]:
    """(findings, located errors, number of files) of every Python file under `paths`."""
    findings, errors = [], []
    files = []
    for raw in paths:
        try:
            files.extend(python_files([raw]))
        except LintInputError as error:
            errors.append(str(error))
    for file in files:
        display = str(file)
        try:
            source = file.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            errors.append(f"{display}:1:1: error: cannot read: {reason}")
            continue
        try:
            found = lint_source(source, display)
        except SyntaxError as error:
            errors.append(f"{display}:{error.lineno or 1}:{error.offset or 1}: error: cannot parse: {error.msg}")
            continue
        except (ValueError, RecursionError) as error:
            errors.append(f"{display}:1:1: error: cannot parse: {error}")
            continue
        findings.extend(f for f in found if (not select or f.code in select) and f.code not in (ignore or ()))
    return sorted(findings), errors, len(files)


def parse_codes(values) -> set[str]:
    codes = set()
    for value in values or []:
        for code in value.split(","):
            code = code.strip().upper()
            if not code:
                continue
            if code not in RULES:
                raise ValueError(f"unknown rule code {code!r} (known: TFG001..TFG{len(RULES):03d})")
            codes.add(code)
    return codes


def sarif(findings: list[Finding]) -> dict:
    from . import __version__

    return {
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "tfgen",
                "version": __version__,
                "informationUri": "https://github.com/tfgen/tfgen#lint",
                "rules": [{"id": code, "name": name, "shortDescription": {"text": name.replace("-", " ")},
                           "fullDescription": {"text": message.split("{")[0].strip()}}
                          for code, (name, message) in RULES.items()],
            }},
            "results": [{
                "ruleId": f.code,
                "level": "warning",
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": Path(f.path).as_posix()},
                    "region": {"startLine": f.line, "startColumn": f.column},
                }}],
            } for f in findings],
        }],
    }


def run(args) -> int:
    """The `tfgen lint` subcommand: 0 clean, 1 findings, 2 usage or unreadable input."""
    try:
        select, ignore = parse_codes(args.select), parse_codes(args.ignore)
    except ValueError as error:
        print(f"tfgen: error: {error}", file=sys.stderr)
        return 2
    findings, errors, files = lint_paths(args.paths, select, ignore)
    for error in errors:
        print(error, file=sys.stderr)
    if args.format == "json":
        print(json.dumps([asdict(f) for f in findings], indent=2))
    elif args.format == "sarif":
        print(json.dumps(sarif(findings), indent=2))
    else:
        for finding in findings:
            print(finding)
        if args.statistics:
            counts = {}
            for finding in findings:
                counts[finding.code] = counts.get(finding.code, 0) + 1
            for code in sorted(counts):
                print(f"{counts[code]:>5}  {code}  {RULES[code][0]}")
        if findings or args.statistics:
            print(f"{len(findings)} finding(s) in {files} file(s)", file=sys.stderr)
    if errors:
        return 2
    return 1 if findings else 0

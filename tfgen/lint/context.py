"""The parsed file the rules share: import aliases, functions, traced code, tapes, distributed steps.

Static analysis of the AST only: nothing is imported or run (not TensorFlow, not the linted code).
"""

from __future__ import annotations

import ast
import bisect
import collections

from tfgen.lint.keras_steps import model_classes, traced_keras_steps

FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
NOT_DESCENDED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
GRADIENT_TAPES = ("tf.GradientTape", "tf.autodiff.GradientTape")
EAGER_WRAPPERS = ("tf.py_function", "tf.numpy_function")  # their Python body runs at every call, eagerly


def dotted(node) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def walk_local(node):
    """Nodes of a function or block, not descending into nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, NOT_DESCENDED):
            stack.extend(ast.iter_child_nodes(child))


def kw(call: ast.Call, name: str):
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword
    return None


def const(node):
    return node.value if isinstance(node, ast.Constant) else None


def top_terms(expr) -> list:
    """Calls and names at the top of an arithmetic expression (iteratively: deep sums stay safe)."""
    terms, stack = [], [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.BinOp):
            stack.extend((node.right, node.left))
        elif isinstance(node, ast.UnaryOp):
            stack.append(node.operand)
        else:
            terms.append(node)
    return terms


def is_method_call(node, *names: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


def is_optimizer_update(node) -> bool:
    """`x.apply_gradients(...)`, `x.minimize(...)`, or `optimizer.apply(...)` (Keras 3)."""
    if is_method_call(node, "apply_gradients", "minimize"):
        return True
    return is_method_call(node, "apply") and "optim" in (dotted(node.func.value) or "").lower()


def is_model_losses(node) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "losses"
        and isinstance(node.ctx, ast.Load)
        and "model" in (dotted(node.value) or "").lower()
    )


def names_of(target) -> list[str]:
    """The plain names a (possibly tuple) assignment target binds."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return []


def assignment_index(nodes, tuples: bool) -> dict[str, list[tuple[int, ast.AST]]]:
    """{name: [(line, assigned value)] sorted by line} of the `Assign`s among `nodes`.

    With `tuples`, names bound by tuple targets count too (their value is the whole right-hand side)."""
    index: dict[str, list[tuple[int, ast.AST]]] = {}
    for node in nodes:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            names = names_of(target) if tuples else ([target.id] if isinstance(target, ast.Name) else [])
            for name in names:
                index.setdefault(name, []).append((node.lineno, node.value))
    for entries in index.values():
        entries.sort(key=lambda entry: entry[0])
    return index


def latest_value(index: dict, name: str, line: int, inclusive: bool):
    """The value last assigned to `name` before `line` (or on it, if `inclusive`), else None."""
    entries = index.get(name)
    if not entries:
        return None
    find = bisect.bisect_right if inclusive else bisect.bisect_left
    position = find(entries, line, key=lambda entry: entry[0])
    return entries[position - 1][1] if position else None


def assigned_name(ctx: FileContext, call) -> str | None:
    """`model` or `self.model` when `call` is the whole value of a single-target assignment."""
    parent = ctx.parent.get(call)
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is call:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if len(targets) == 1:
            return dotted(targets[0])
    return None


def is_strategy_name(expr) -> bool:
    return "strategy" in (dotted(expr) or "").lower()


class FileContext:
    """One parsed file, with the name resolution the rules share."""

    def __init__(self, path: str, source: str, tree: ast.Module):
        self.path, self.source, self.tree = path, source, tree
        self.lines = source.splitlines()
        self.parent: dict[ast.AST, ast.AST] = {}
        self.children: dict[int, list[ast.AST]] = {}
        self.nodes: list[ast.AST] = []
        queue = collections.deque([tree])
        while queue:  # breadth first, like ast.walk, visiting each node's children once
            node = queue.popleft()
            self.nodes.append(node)
            children = self.children[id(node)] = list(ast.iter_child_nodes(node))
            for child in children:
                self.parent[child] = node
            queue.extend(children)
        self.cache: dict[object, object] = {}
        self.aliases = self._aliases()
        self.calls = [n for n in self.nodes if isinstance(n, ast.Call)]
        self.defs: dict[str, list[ast.AST]] = {}
        self.methods: dict[str, list[ast.AST]] = {}
        for node in self.nodes:
            if isinstance(node, FUNCS):
                owner = self.parent.get(node)
                table = self.methods if isinstance(owner, ast.ClassDef) else self.defs
                table.setdefault(node.name, []).append(node)
        self.model_classes = model_classes(self)
        self.keras_steps = traced_keras_steps(self)
        self.tf_functions, roots = self._tf_function_roots()
        self.traced = self.closure(roots | self.keras_steps, include_nested=True)
        self.run_functions = self._run_functions()
        self.distributed = self.closure(self.run_functions)
        self.tapes = self._tapes()
        self.attr_names = {n.attr for n in self.nodes if isinstance(n, ast.Attribute)} | {
            n.id for n in self.nodes if isinstance(n, ast.Name)
        }
        self.tape_blocks = {id(w) for w, _, _ in self.tapes}

    # names -----------------------------------------------------------------
    def _aliases(self) -> dict[str, str]:
        aliases = {}
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for a in node.names:
                    head = a.name.split(".")[0]
                    aliases[a.asname or head] = a.name if a.asname else head
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
            name = "tf" + name[len("tensorflow") :]
        for prefix in ("tf.keras.", "tf.compat.v2.keras.", "keras.src."):
            if name.startswith(prefix):
                name = "keras." + name[len(prefix) :]
        return name

    def func_name(self, call: ast.Call) -> str | None:
        key = ("func-name", id(call))
        if key not in self.cache:
            self.cache[key] = self.canonical(call.func)
        return self.cache[key]

    # functions ---------------------------------------------------------------
    def enclosing_function(self, node):
        node = self.parent.get(node)
        while node is not None and not isinstance(node, FUNCS):
            node = self.parent.get(node)
        return node

    def resolve_function(self, expr) -> list:
        """Local definitions that `expr` (a callee) may name: `f` or `self.f`."""
        if isinstance(expr, ast.Name):
            return self.defs.get(expr.id, [])
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return self.methods.get(expr.attr, [])
        return []

    def is_tf_function_decorator(self, decorator) -> bool:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        return self.canonical(target) in ("tf.function", "tf.compat.v2.function")

    def _wrapped_by_tf_function(self, call: ast.Call):
        """`f` in `tf.function(f)` or `tf.function(...)(f)`, else None."""
        if self.canonical(call.func) == "tf.function" and call.args:
            return call.args[0]
        if isinstance(call.func, ast.Call) and self.canonical(call.func.func) == "tf.function" and call.args:
            return call.args[0]
        return None

    def _tf_function_roots(self):
        names, roots = set(), set()
        for node in self.nodes:
            if isinstance(node, FUNCS) and any(self.is_tf_function_decorator(d) for d in node.decorator_list):
                names.add(node.name)
                roots.add(node)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                wrapped = self._wrapped_by_tf_function(node.value)
                if wrapped is None:
                    continue
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        names.add(target.id)
                    elif isinstance(target, ast.Attribute):
                        names.add(target.attr)
                roots.update(self.resolve_function(wrapped))
        return names, roots

    def callees(self, function) -> list:
        """Local functions that `function` calls or hands to `strategy.run`."""
        found = []
        for node in self.walk(function):
            if not isinstance(node, ast.Call):
                continue
            found.extend(self.resolve_function(node.func))
            if self.is_strategy_run(node) and node.args:
                found.extend(self.resolve_function(node.args[0]))
        return found

    def closure(self, roots, include_nested: bool = False) -> set:
        """`roots` and every local function they call (and, if asked, define), transitively."""
        reached, queue = set(roots), list(roots)
        while queue:
            function = queue.pop()
            more = self.callees(function)
            if include_nested:
                more += [n for n in self.walk(function) if n is not function and isinstance(n, FUNCS)]
            for callee in more:
                if callee not in reached:
                    reached.add(callee)
                    queue.append(callee)
        return reached

    def _run_functions(self) -> list:
        seen = []
        for call in self.calls:
            if self.is_strategy_run(call) and call.args:
                for function in self.resolve_function(call.args[0]):
                    if function not in seen:
                        seen.append(function)
        return seen

    def is_tf_function_call(self, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.tf_functions:
            return func.id
        if not (isinstance(func, ast.Attribute) and func.attr in self.tf_functions):
            return None
        methods = self.methods.get(func.attr, [])
        if not methods:
            return func.attr  # e.g. `self.step = tf.function(self._step)`
        if any(m in self.traced and any(self.is_tf_function_decorator(d) for d in m.decorator_list) for m in methods):
            return func.attr
        return None

    def is_strategy_run(self, call: ast.Call) -> bool:
        return is_method_call(call, "run", "experimental_run_v2") and is_strategy_name(call.func.value)

    def is_step_call(self, call: ast.Call) -> bool:
        if self.is_tf_function_call(call) or self.is_strategy_run(call):
            return True
        return is_method_call(call, "reduce") and is_strategy_name(call.func.value)

    # tapes -------------------------------------------------------------------
    def _tapes(self):
        """(with-node, tape name or None, GradientTape call) of each `with tf.GradientTape()` block."""
        tapes = []
        for node in self.nodes:
            if not isinstance(node, (ast.With, ast.AsyncWith)):
                continue
            for item in node.items:
                expr = item.context_expr
                if isinstance(expr, ast.Call) and self.func_name(expr) in GRADIENT_TAPES:
                    name = item.optional_vars.id if isinstance(item.optional_vars, ast.Name) else None
                    tapes.append((node, name, expr))
        return tapes

    def tape_of(self, node):
        """The `with tf.GradientTape()` block around `node` in its function, else None."""
        node = self.parent.get(node)
        while node is not None and not isinstance(node, FUNCS):
            if id(node) in self.tape_blocks:
                return node
            node = self.parent.get(node)
        return None

    def in_tape(self, node) -> bool:
        return self.tape_of(node) is not None

    def in_traced(self, node) -> bool:
        """Whether `node` runs while a tf.function is traced (not in a `tf.py_function`, which runs eagerly)."""
        function = self.enclosing_function(node)
        while function is not None:
            if any(self.canonical(getattr(d, "func", d)) in EAGER_WRAPPERS for d in function.decorator_list):
                return False
            if function in self.traced:
                return True
            function = self.enclosing_function(function)
        return False

    def innermost_loop(self, node):
        """The nearest enclosing loop or function of `node`."""
        node = self.parent.get(node)
        while node is not None and not isinstance(node, (ast.For, ast.While, *FUNCS)):
            node = self.parent.get(node)
        return node

    def scopes(self):
        """The module and every function: the places a name is assigned and read."""
        yield self.tree
        for node in self.nodes:
            if isinstance(node, FUNCS):
                yield node

    def cached(self, key, compute):
        """`compute()` once per file and `key` (the rules' shared indexes)."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]

    def local(self, scope) -> list:
        """walk_local(scope) as a list (same order), computed once per scope."""
        return self.cached(("local", id(scope)), lambda: self._walk_local(scope))

    def walk(self, node) -> list:
        """`node` and everything under it (ast.walk, from the children computed once)."""
        found, stack = [node], list(self.children[id(node)])
        while stack:
            child = stack.pop()
            found.append(child)
            stack.extend(self.children[id(child)])
        return found

    def _walk_local(self, scope) -> list:
        found, stack = [], list(self.children[id(scope)])
        while stack:
            child = stack.pop()
            found.append(child)
            if not isinstance(child, NOT_DESCENDED):
                stack.extend(self.children[id(child)])
        return found

    def last_assignment(self, scope, name: str, before_line: int):
        """The value last assigned to `name` in `scope` (locally) before `before_line`."""
        index = self.cached(("assignments", id(scope)), lambda: assignment_index(self.local(scope), tuples=False))
        return latest_value(index, name, before_line, inclusive=False)

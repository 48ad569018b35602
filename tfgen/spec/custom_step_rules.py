"""The `custom` algorithm's rules: `networks` and one optimizer each (by the same names), plain
networks, and a step that exists: its module is found (the spec's folder, the working directory,
sys.path) and read, never imported, and defines the function; `tfgen lint`'s findings in it are
issues at their file:line:col.

What the custom step does not do yet (validation, metrics, ...) is
refused, one line each, rather than ignored.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from pathlib import Path

from tfgen.errors import SpecIssue
from tfgen.spec.gan_rules import NOT_YET, monitor_issues
from tfgen.spec.gan_rules import not_yet_issues as not_yet
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec

# The custom step clips (ctx.apply) as the spec asks; the rest of gan's list it does not do yet.
NOT_YET_CUSTOM = tuple(path for path in NOT_YET if path != ("train", "gradient_clipping"))
STEP = ("algorithm", "step")


def custom_issues(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Every custom rule (the sections validated, `networks` and `optimizers` given)."""
    yield from _optimizers(spec, doc)
    yield from _script_names(spec, doc)
    for name, network in spec.networks.items():
        for field in ("builder", "branches"):
            if getattr(network, field):
                yield doc.issue(
                    ("networks", name, field),
                    f"`{field}` is not supported in the networks of a `custom` step yet",
                )
    yield from not_yet(spec, doc, "custom", NOT_YET_CUSTOM)
    yield from monitor_issues(spec, doc, "custom", list(spec.algorithm.logs))
    yield from step_issues(spec.algorithm.step, doc)


def _optimizers(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """One optimizer per network, by the network's name."""
    for name in spec.networks:
        if name not in spec.optimizers:
            yield doc.issue(
                ("optimizers",),
                f"missing `optimizers.{name}` (one optimizer per network)",
                key=True,
            )
    for name in spec.optimizers:
        if name not in spec.networks:
            known = ", ".join(f"`{n}`" for n in spec.networks)
            yield doc.issue(
                ("optimizers", name),
                f"no network `{name}` (the networks are {known})",
                key=True,
            )


def network_names(network: str) -> set[str]:
    """The top-level names a network of a custom step binds in its script (its builder, its
    inputs' constant): named after the user's network, so they must not clash."""
    return {f"build_{network}", f"{network.upper()}_INPUTS"}


def _script_names(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Each network's builder and inputs' constant (script_names.network_names) are its own."""
    taken = {
        "build_optimizers",
        "build_metrics",
    }  # what the custom script's own functions are named
    for name in spec.networks:
        clash = sorted(network_names(name) & taken)
        if clash:
            yield doc.issue(
                ("networks", name),
                f"a network named `{name}` would redefine the script's `{clash[0]}`: rename it",
                key=True,
            )
        taken |= network_names(name)


def step_issues(reference: str, doc: Located) -> list[SpecIssue]:
    """The step's module found and defining the function, and lint's findings in it."""
    module, _, name = reference.partition(":")
    file = step_file(module, Path(doc.path).parent)
    if file is None:
        where = "the spec's folder, the working directory or sys.path"
        return [doc.issue(STEP, f"`{reference}`: no module `{module}` in {where}")]
    if file.suffix != ".py":
        return []  # compiled or built in: nothing to read
    try:
        source = file.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(file))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as error:
        return [doc.issue(STEP, f"`{reference}`: cannot read {file}: {error}")]
    if name not in _top_level_names(tree):
        return [doc.issue(STEP, f"`{reference}`: {file.name} defines no function `{name}`")]
    return lint_issues(source, file)


def step_file(module: str, spec_dir: Path) -> Path | None:
    """The file of `module` (a .py file or a package's __init__.py) in the spec's folder or the
    working directory, else where sys.path finds it (its top package located, not imported).
    """
    parts = module.split(".")
    for folder in (spec_dir, Path.cwd()):
        for candidate in (
            folder.joinpath(*parts).with_suffix(".py"),
            folder.joinpath(*parts, "__init__.py"),
        ):
            if candidate.is_file():
                return candidate
    try:
        found = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    if found is None:
        return None
    if len(parts) == 1 and found.has_location and found.origin:
        return Path(found.origin)
    return Path("<installed>")  # a submodule of an installed package: found when the script imports it


def _top_level_names(tree: ast.Module) -> set[str]:
    """The names a module's top level defines (functions, classes, assignments, imports)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).partition(".")[0] for alias in node.names)
    return names


def lint_issues(source: str, file: Path) -> list[SpecIssue]:
    """`tfgen lint`'s findings in the step's module, each at its file:line:col."""
    from tfgen.lint import lint_source

    try:
        findings = lint_source(source, str(file))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [SpecIssue(str(file), f.line, f.column, "algorithm.step", f"{f.code} {f.message}") for f in findings]

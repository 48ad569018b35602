"""How tfgen finds a user's `package.module:name`: on sys.path, then in the working directory,
then in the spec's folder (the rule the generated runtime follows too). No TensorFlow here,
but for checking a class a Keras place takes.

What a reference may resolve to depends on its place (a layer, a loss, ..., a data function, a
model builder): the rule is the runtime's own (`tfgen_runtime/imports.py`, imported here from
the installed runtime), so `--deep` accepts what the scripts do. A module of the project is one whose
file lies under the working directory or the spec's folder but not in a site-packages or
dist-packages folder there (a virtual environment inside the project is not the project). Any
other module is refused before it is imported unless it may hold what the place takes (a public
keras or tensorflow module at a Keras place; a known loader at a data place); what the
reference resolves to is checked before anything calls it, by its defining module too
(`mymodule:system` after `from os import system` is refused).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import pkgutil
import sys
import types
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from tfgen.errors import UsageError
from tfgen.generate.runtime import install_command
from tfgen.spec.catalog import closest, did_you_mean
from tfgen.spec.script_rules import RUNTIME_PACKAGE

VENDORED = {"site-packages", "dist-packages"}  # installed packages, even inside the project


class LookupFailed(Exception):
    """A module or function a spec names cannot be imported (the message is one line)."""


@cache
def runtime_module(name: str) -> types.ModuleType:
    """The installed runtime's module `name` (`imports`, `custom`): the code the scripts run
    (the package imports a module on first use, so this imports no more than `name` needs)."""
    try:
        return importlib.import_module(f"{RUNTIME_PACKAGE}.{name}")
    except ModuleNotFoundError as error:
        if error.name != RUNTIME_PACKAGE:
            raise
    raise UsageError(f"this command runs the runtime's code, and tfgen-runtime is not installed: {install_command()}")


def refusal(reference: str, module: str, spec_dir: Path, place: str) -> str | None:
    """Why `module` may not be imported for `reference` at `place` without --trust (None: it
    may). Imports nothing but a library's parent packages: a top-level module is only located."""
    rule = runtime_module("imports")
    if rule.library_allows(reference, place):
        return None
    top = module.partition(".")[0]
    libraries = rule.CLASS_LIBRARIES if place in rule.BASES else ("sklearn", "tfgen", "keras")
    if top in libraries and _missing(module):
        return None  # a misspelt module of a library: the import says so, with a hint
    return None if in_project(module, spec_dir, missing=True) else rule.refused(reference, module, place)


def in_project(module: str, spec_dir: Path, missing: bool = False) -> bool:
    """Whether `module` is a module of the project (`missing`: what one found nowhere counts as)."""
    top = module.partition(".")[0]
    if top in sys.stdlib_module_names:
        return False
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):  # e.g. a module in sys.modules without __spec__
        return False
    return missing if found is None else _in_project(found, [Path.cwd(), spec_dir])


def _missing(module: str) -> bool:
    """Whether `module` does not exist (its parent packages are imported to tell)."""
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def _in_project(found, folders: list[Path]) -> bool:
    """Whether every file of the located module lies under one of `folders`, outside installed packages."""
    files = [found.origin] if found.has_location else list(found.submodule_search_locations or [])
    return bool(files) and all(_project_file(Path(file), folders) for file in files)


def _project_file(path: Path, folders: list[Path]) -> bool:
    for folder in folders:
        try:
            inside = path.resolve().relative_to(folder.resolve())
        except ValueError:
            continue
        if not VENDORED & set(inside.parts):
            return True
    return False


@contextlib.contextmanager
def lookup_path(spec_dir: Path):
    """sys.path extended by the working directory, then `spec_dir` (while importing and calling)."""
    saved = list(sys.path)
    extra = [str(Path.cwd()), str(spec_dir.resolve())]
    sys.path[:] = saved + [p for i, p in enumerate(extra) if p not in saved and p not in extra[:i]]
    try:
        yield
    finally:
        sys.path[:] = saved


def import_function(reference: str, spec_dir: Path, place: str, trust: bool = False) -> Callable[..., Any]:
    """The function or class `package.module:name` names at `place` (a Keras kind, `data` or
    `builder`: tfgen_runtime/imports.py), imported under the lookup rule and checked to fit its
    place before anything calls it; `trust` allows any module (see `refusal`).

    Raises:
        LookupFailed: the module is refused, not found or fails to import, has no such name, or
            what it names does not fit the place.
    """
    module_name, _, name = reference.partition(":")
    with lookup_path(spec_dir):
        why = None if trust else refusal(reference, module_name, spec_dir, place)
        if why:
            raise LookupFailed(why)
        module = _imported(module_name, spec_dir)
        function = getattr(module, name, None)
        if function is None:
            names = [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n, None))]
            raise LookupFailed(f"module `{module_name}` has no function `{name}`{did_you_mean(name, names)}")
        home = getattr(function, "__module__", None) or module_name
        why = runtime_module("imports").misfit(reference, function, place, in_project(home, spec_dir), trust)
    if why:
        raise LookupFailed(why)
    return function


def _imported(module_name: str, spec_dir: Path) -> types.ModuleType:
    """The module, imported (LookupFailed in one line when it cannot be)."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name and (module_name == error.name or module_name.startswith(error.name + ".")):
            raise LookupFailed(
                f"no module `{error.name}`{_sibling_hint(error.name)} (looked on sys.path, in the working "
                f"directory and next to the spec in {_shown(spec_dir)})"
            ) from None
        raise LookupFailed(f"importing `{module_name}` failed: {_one_line(error)}") from None
    except (Exception, SystemExit) as error:
        raise LookupFailed(f"importing `{module_name}` failed: {_one_line(error)}") from None


def _sibling_hint(missing: str) -> str:
    """`; did you mean `pkg.other`?` when the parent package has a module of a close name."""
    parent, _, last = missing.rpartition(".")
    if not parent:
        return ""
    try:
        package = importlib.import_module(parent)
    except Exception:
        return ""
    names = [info.name for info in pkgutil.iter_modules(getattr(package, "__path__", []))]
    match = closest(last, names)
    return f"; did you mean `{parent}.{match}`?" if match else ""


def _shown(folder: Path) -> str:
    """A folder as messages show it: relative to the working directory when inside it."""
    try:
        return (folder.resolve().relative_to(Path.cwd().resolve()).as_posix() or ".") + "/"
    except ValueError:
        return folder.resolve().as_posix() + "/"


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__

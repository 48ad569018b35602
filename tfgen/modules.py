"""How tfgen finds a user's `package.module:function`: on sys.path, then in the working directory,
then in the spec's directory (the rule the generated runtime follows too). No TensorFlow here."""

from __future__ import annotations

import contextlib
import importlib
import pkgutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .catalog import closest, did_you_mean


class LookupFailed(Exception):
    """A module or function a spec names cannot be imported (the message is one line)."""


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


def import_function(reference: str, spec_dir: Path) -> Callable[..., Any]:
    """The function `package.module:function` names, imported under the lookup rule.

    Raises:
        LookupFailed: the module is not found or fails to import, or has no such function.
    """
    module_name, _, name = reference.partition(":")
    with lookup_path(spec_dir):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name and (module_name == error.name or module_name.startswith(error.name + ".")):
                raise LookupFailed(
                    f"no module `{error.name}`{_sibling_hint(error.name)} (looked on sys.path, in the working "
                    f"directory and next to the spec in {_shown(spec_dir)})"
                ) from None
            raise LookupFailed(f"importing `{module_name}` failed: {_one_line(error)}") from None
        except (Exception, SystemExit) as error:  # noqa: BLE001 - the module's own code failed
            raise LookupFailed(f"importing `{module_name}` failed: {_one_line(error)}") from None
    function = getattr(module, name, None)
    if function is None:
        names = [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n, None))]
        raise LookupFailed(f"module `{module_name}` has no function `{name}`{did_you_mean(name, names)}")
    if not callable(function):
        raise LookupFailed(f"`{reference}` is a {type(function).__name__}, not a function")
    return function


def _sibling_hint(missing: str) -> str:
    """`; did you mean `pkg.other`?` when the parent package has a module of a close name."""
    parent, _, last = missing.rpartition(".")
    if not parent:
        return ""
    try:
        package = importlib.import_module(parent)
    except Exception:  # noqa: BLE001 - only a hint
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

"""How tfgen finds a user's `package.module:function`: on sys.path, then in the working directory,
then in the spec's directory (the rule the generated runtime follows too). No TensorFlow here.

Which modules a spec may name (the runtime's `function()` applies the same rule): without
`--trust`, only a library tfgen uses (LIBRARIES, with their submodules) or a module of the
project, one whose file lies under the working directory or the spec's folder but not in a
site-packages or dist-packages folder there (a virtual environment inside the project is not
the project). Every standard-library module and any other installed package is refused before
it is imported; so is a function whose own `__module__` is refused (`mymodule:system` after
`from os import system`).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import pkgutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tfgen.spec.catalog import closest, did_you_mean

# The libraries tfgen itself uses or names in its examples: a spec may name them without --trust.
LIBRARIES = ("keras", "tensorflow", "numpy", "sklearn.datasets", "tensorflow_datasets", "tfgen.datasets")
VENDORED = {"site-packages", "dist-packages"}  # installed packages, even inside the project


class LookupFailed(Exception):
    """A module or function a spec names cannot be imported (the message is one line)."""


def refusal(reference: str, module: str, spec_dir: Path) -> str | None:
    """Why `module` may not be imported for `reference` without --trust (None: it may). Imports
    nothing: a top-level module is only located (on the current sys.path)."""
    if any(f"{module}.".startswith(f"{library}.") for library in LIBRARIES):
        return None
    top = module.partition(".")[0]
    refused = (
        f"{reference}: refusing to import `{module}` (not a module of this project nor a library tfgen "
        "uses); pass --trust to allow it"
    )
    if top in sys.stdlib_module_names:
        return refused
    if top in {library.partition(".")[0] for library in LIBRARIES} and _missing(module):
        return None  # a misspelt module of a library: the import says so, with a hint
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):  # e.g. a module in sys.modules without __spec__
        return refused
    if found is None or _in_project(found, [Path.cwd(), spec_dir]):
        return None  # None: not there at all, the import says so
    return refused


def _missing(module: str) -> bool:
    """Whether `module` does not exist (its parent packages are imported to tell)."""
    try:
        return importlib.util.find_spec(module) is None
    except (ImportError, ValueError):
        return True


def _in_project(found, folders: list[Path]) -> bool:
    """Whether every file of the located module lies under one of `folders`, outside installed packages."""
    places = [found.origin] if found.has_location else list(found.submodule_search_locations or [])
    return bool(places) and all(_project_file(Path(place), folders) for place in places)


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


def import_function(reference: str, spec_dir: Path, trust: bool = False) -> Callable[..., Any]:
    """The function `package.module:function` names, imported under the lookup rule; without
    `trust`, only from a module of the project or of LIBRARIES (see `refusal`).

    Raises:
        LookupFailed: the module is refused, not found or fails to import, or has no such function.
    """
    module_name, _, name = reference.partition(":")
    with lookup_path(spec_dir):
        why = None if trust else refusal(reference, module_name, spec_dir)
        if why:
            raise LookupFailed(why)
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name and (module_name == error.name or module_name.startswith(error.name + ".")):
                raise LookupFailed(
                    f"no module `{error.name}`{_sibling_hint(error.name)} (looked on sys.path, in the working "
                    f"directory and next to the spec in {_shown(spec_dir)})"
                ) from None
            raise LookupFailed(f"importing `{module_name}` failed: {_one_line(error)}") from None
        except (Exception, SystemExit) as error:
            raise LookupFailed(f"importing `{module_name}` failed: {_one_line(error)}") from None
    function = getattr(module, name, None)
    if function is None:
        names = [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n, None))]
        raise LookupFailed(f"module `{module_name}` has no function `{name}`{did_you_mean(name, names)}")
    if not callable(function):
        raise LookupFailed(f"`{reference}` is a {type(function).__name__}, not a function")
    home = getattr(function, "__module__", None) or module_name
    with lookup_path(spec_dir):
        why = None if trust else refusal(reference, home, spec_dir)
    if why:  # imported into an allowed module from a refused one
        raise LookupFailed(why)
    return function


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

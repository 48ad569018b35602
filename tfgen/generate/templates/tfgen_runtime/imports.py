"""The user's functions a spec names (`package.module:name`), imported when needed,
and refused unless they are the project's, a library tfgen uses, or --trust allows any.
"""

import importlib.util
import sys
from pathlib import Path

from .errors import UserError

# What a spec may name without --trust, besides the project's modules (refuse_untrusted).
LIBRARIES = ("keras", "tensorflow", "numpy", "tensorflow_datasets")
LIBRARIES += ("sklearn.datasets", "tfgen.datasets")  # and each one's submodules
TRUSTED = False  # --trust: import any module the spec names (set by parse_args)


def function(reference, spec_dir=None):
    """The function `package.module:name` names, imported when the script needs it.

    Its module is looked up on sys.path (the script's folder is on it), then in the working
    directory, then in the spec's folder (each added to sys.path only when needed).
    """
    module, _, name = reference.partition(":")
    searched = list(dict.fromkeys(str(Path(p).resolve()) for p in sys.path))
    folders = [str(Path(f).resolve()) for f in (Path.cwd(), spec_dir) if f]
    for folder in [None, *folders]:
        if folder in searched:
            continue
        if folder:
            sys.path.append(folder)
            searched.append(folder)
        try:
            refuse_untrusted(reference, module, folders)
            found = getattr(importlib.import_module(module), name, None)
        # Not found here: try the next folder; any other ImportError is the module's own.
        except ImportError as error:
            missing = isinstance(error, ModuleNotFoundError) and error.name
            if missing and f"{module}.".startswith(f"{missing}."):
                continue
            raise UserError(f"{reference}: importing {module}: {error}") from error
        if not callable(found):
            raise UserError(f"{reference}: module {module} has no function `{name}`")
        home = getattr(found, "__module__", None) or module  # where it is defined
        refuse_untrusted(reference, home, folders)
        return found
    searched = ", ".join(searched)
    where = f"{searched} (sys.path, the working directory, the spec's folder)"
    raise UserError(f"{reference}: no module {module} in {where}")


def refuse_untrusted(reference, module, folders):
    """UserError unless --trust, `module` is in LIBRARIES, or its files (located, not
    imported) lie under `folders` outside site-packages; one found nowhere passes."""
    if TRUSTED or any(f"{module}.".startswith(f"{lib}.") for lib in LIBRARIES):
        return
    top = module.partition(".")[0]
    places = [] if top in sys.stdlib_module_names else module_files(top)
    if places is None or places and all(in_project(p, folders) for p in places):
        return
    why = f"refusing to import `{module}` (not a module of this project nor a library tfgen uses)"
    raise UserError(f"{reference}: {why}; pass --trust to allow it")


def module_files(top):
    """The file or folders of the top-level module `top` (None: found nowhere)."""
    try:
        found = importlib.util.find_spec(top)
    except ValueError:  # in sys.modules without a __spec__ (`__main__`)
        return []
    if found is None:
        return None
    folders = found.submodule_search_locations or []
    return [found.origin] if found.has_location else list(folders)


def in_project(place, folders):
    """Whether `place` lies under one of `folders`, outside any site-packages there."""
    path = Path(place).resolve()
    inside = [path.relative_to(f).parts for f in folders if path.is_relative_to(f)]
    return any(not {"site-packages", "dist-packages"} & set(i) for i in inside)

"""The user's functions and classes a spec names (`package.module:name`), imported when
needed, and refused unless they fit the place they are named in.

A place is a kind of Keras object (`layers`, `losses`, `metrics`, `optimizers`, `schedules`,
`regularizers`, `initializers`, `constraints`), `data` (a `python` source's function) or
`builder` (`model.builder`) or `step` (a custom algorithm's step). Without --trust a reference resolves to:
- at a Keras place: a subclass of that kind's base class (keras.layers.Layer, ...) from a
  module of the project or a public module of keras or tensorflow; at `losses`, also a
  function (or other callable) defined in a module of the project;
- at `data`: a function of a module of the project, or one of LOADERS;
- at `builder` and `step`: a function of a module of the project.
Its module is refused before it is imported unless it may hold such an object; what it
resolves to is checked before anything calls or constructs it. A library is never allowed
whole: its functions do things (`tensorflow.io.gfile:rmtree` deletes a folder), and at a
Keras place only a class of that kind is constructed. --trust allows any module and any
function (the project's choice), but a Keras place still takes only its kind of class.
"""

import fnmatch
import importlib.util
import sys
from pathlib import Path

from .errors import UserError

TRUSTED = False  # --trust: import any module the spec names (set by parse_args)


def function(reference, spec_dir, place):
    """What `package.module:name` names at `place` (see above), imported when the script
    needs it and checked to fit its place before anything calls it.

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
            refuse_untrusted(reference, module, folders, place)
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
        why = misfit(reference, found, place, project_module(home, folders), TRUSTED)
        if why:
            raise UserError(why)
        return found
    searched = ", ".join(searched)
    where = f"{searched} (sys.path, the working directory, the spec's folder)"
    raise UserError(f"{reference}: no module {module} in {where}")


def refuse_untrusted(reference, module, folders, place):
    """UserError unless --trust, `module` may hold what `place` takes (library_allows), or
    it is a module of the project (found nowhere: the import says so)."""
    if TRUSTED or library_allows(reference, place):
        return
    if not project_module(module, folders, missing=True):
        raise UserError(refused(reference, module, place))


def project_module(module, folders, missing=False):
    """Whether `module`'s files (located, not imported) lie under `folders` outside any
    site-packages; `missing`: what a module found nowhere counts as."""
    top = module.partition(".")[0]
    files = [] if top in sys.stdlib_module_names else module_files(top)
    if files is None:
        return missing
    return bool(files) and all(in_project(f, folders) for f in files)


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


def in_project(file, folders):
    """Whether `file` lies under one of `folders`, outside any site-packages there."""
    path = Path(file).resolve()
    inside = [path.relative_to(f).parts for f in folders if path.is_relative_to(f)]
    return any(not {"site-packages", "dist-packages"} & set(i) for i in inside)


# --- what each place takes ---------------------------------------------------------

# The base class of each Keras place, as an attribute path of the `keras` module.
BASES = {
    "layers": "layers.Layer",
    "losses": "losses.Loss",
    "metrics": "metrics.Metric",
    "optimizers": "optimizers.Optimizer",
    "schedules": "optimizers.schedules.LearningRateSchedule",
    "regularizers": "regularizers.Regularizer",
    "initializers": "initializers.Initializer",
    "constraints": "constraints.Constraint",
}
# The libraries whose public modules may hold a Keras place's class.
CLASS_LIBRARIES = ("keras", "tensorflow")
# The data functions a spec may name from a library: loaders that only make or read data.
LOADERS = (
    "sklearn.datasets:load_*",
    "sklearn.datasets:make_*",
    "tfgen.datasets:*",
    "keras.datasets.*:load_data",
)
WANTED = {
    "data": f"a data function comes from a module of this project or is a known loader ({', '.join(LOADERS)})",
    "builder": "a model builder comes from a module of this project",
    "step": "a custom step comes from a module of this project",
    "losses": "a loss is a keras.losses.Loss subclass (from keras, tensorflow or a module of this project) "
    "or a function of a module of this project",
}


def wanted(place):
    """What `place` takes, as messages say it."""
    if place in WANTED:
        return WANTED[place]
    return f"a {noun(place)} is a keras.{BASES[place]} subclass from keras, tensorflow or a module of this project"


def noun(place):
    """`layers` -> `layer`, as messages say it."""
    return {"schedules": "learning-rate schedule"}.get(place, place.rstrip("s"))


def library_allows(reference, place):
    """Whether `reference`'s module may be imported at `place` though it is not the project's."""
    module, _, name = reference.partition(":")
    if place == "data":
        known = any(fnmatch.fnmatchcase(reference, loader) for loader in LOADERS)
        return known and not name.startswith("_")
    parts = module.split(".")
    public = not any(part.startswith("_") for part in parts)
    return place in BASES and public and parts[0] in CLASS_LIBRARIES


def refused(reference, module, place):
    """The one-line refusal of importing `module` for `reference` at `place`."""
    return f"{reference}: refusing to import `{module}`: {wanted(place)}; pass --trust to allow any module"


def misfit(reference, found, place, home_in_project, trusted):
    """Why `found` (what `reference` resolved to) does not fit `place` (None: it does).
    `home_in_project`: whether the module that defines it is the project's."""
    if not callable(found):
        return f"{reference}: {wanted(place)}, and this is {described(found)}"
    if place in BASES:
        kind = isinstance(found, type) and issubclass(found, keras_base(place))
        own = place == "losses" and (trusted or home_in_project)  # a loss function
        if kind or own:
            return None
        return f"{reference}: {wanted(place)}, and this is {described(found)}"
    if trusted or home_in_project:
        return None
    home = getattr(found, "__module__", None) or ""
    library = reference.partition(".")[0].partition(":")[0]
    if library_allows(reference, place) and home.partition(".")[0] == library:
        return None  # a known loader, defined in its library
    return f"{reference}: {wanted(place)}, and this is defined in `{home}`; pass --trust to allow any module"


def keras_base(place):
    """The Keras base class of `place` (Keras imported only here: the rest needs none)."""
    import keras

    base = keras
    for attribute in BASES[place].split("."):
        base = getattr(base, attribute)
    return base


def described(found):
    """What was found, as messages say it: `the class `m.Name``, `a function defined in `m``."""
    if isinstance(found, type):
        return f"the class `{found.__module__}.{found.__qualname__}`"
    if callable(found):
        return f"a {type(found).__name__} defined in `{getattr(found, '__module__', None)}`"
    return f"a {type(found).__name__}"

"""The user's own Keras objects: `type: "package.module:Name"` wherever a Keras class is taken.

A reference names a class (a layer, loss, metric, regularizer, initializer, constraint or
learning-rate schedule) or, for a loss, a plain function `(y_true, y_pred) -> per-example loss`.
Its module is found by the rule of `python` sources and builders (tfgen.check.modules), and only
`validate --deep`, `smoke` and the scripts import it. Its arguments are passed as keyword arguments
and are not typed against the Keras catalog (`--deep` builds the object, and reports what it
refuses). Nothing here imports the user's code.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from typing import Any

from tfgen.spec import catalog
from tfgen.spec.models import KerasObject, Spec
from tfgen.spec.models.base import DOTTED, IDENTIFIER
from tfgen.spec.models.model import Residual


def is_custom(name: Any) -> bool:
    """Whether a `type` names the user's own object (`module:Name`) rather than a Keras class."""
    return isinstance(name, str) and ":" in name


def reference_problem(name: str) -> str | None:
    """Why `name` is not a well-formed `package.module:Name` (None: it is)."""
    module, _, attribute = name.partition(":")
    if not DOTTED.match(module) or not IDENTIFIER.match(attribute):
        return f"expected a Keras class name or `package.module:Name` (your own class), found `{name}`"
    if any(keyword.iskeyword(part) for part in [*module.split("."), attribute]):
        return f"`{name}` contains a Python keyword"
    return None


def class_name(reference: str) -> str:
    """The `Name` of `module:Name`."""
    return reference.partition(":")[2]


def snake_case(name: str) -> str:
    """`F1Score` -> `f1_score`, as Keras names a metric after its class."""
    words = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", words).lower()


def _arguments(obj: KerasObject | dict) -> dict[str, Any]:
    if isinstance(obj, dict):
        return {k: v for k, v in obj.items() if k != "type"}
    return dict(obj.args)


def _type(obj: KerasObject | dict) -> str:
    return obj["type"] if isinstance(obj, dict) else obj.type


def references_in(located: list[tuple[tuple, Any]], place: str | None) -> list[tuple[tuple, str, str | None]]:
    """(location of its `type`, reference, place) for each distinct custom reference among located
    Keras objects of kind `place` (layer lists' residual blocks opened, nested arguments included,
    each at its own kind: `kernel_regularizer` at `regularizers`), first first."""
    found: dict[str, tuple[tuple, str | None]] = {}
    for loc, item in located:
        if isinstance(item, Residual):
            inner = [([((*loc, "residual", i), layer) for i, layer in enumerate(item.residual)], place)]
        else:
            if is_custom(_type(item)):
                found.setdefault(_type(item), ((*loc, "type"), place))
            args = _arguments(item).items()
            typed = [(k, v) for k, v in args if isinstance(v, dict) and isinstance(v.get("type"), str)]
            inner = [([((*loc, k), v)], catalog.nested_kind(str(k), v["type"])) for k, v in typed]
        for group, kind in inner:
            for where, reference, at in references_in(group, kind):
                found.setdefault(reference, (where, at))
    return [(where, reference, at) for reference, (where, at) in found.items()]


# The Keras kind each group of spec_objects is (the place its references must fit).
PLACES = {
    "model": "layers",
    "preprocess": "layers",
    "augment": "layers",
    "losses": "losses",
    "metrics": "metrics",
    "optimizer": "optimizers",
}


def spec_objects(spec: Spec) -> dict[str, list[tuple[tuple, Any]]]:
    """The spec's located Keras objects, by the script function that builds them (see PLACES)."""
    model, train = spec.model, spec.data.train
    layers = [(("model", "branches", n, i), x) for n, items in model.branches.items() for i, x in enumerate(items)]
    layers += [(("model", "layers", i), x) for i, x in enumerate(model.layers)]
    layers += [(("model", "outputs", n, i), x) for n, items in model.outputs.items() for i, x in enumerate(items)]
    return {
        "model": layers,
        "preprocess": [(("data", "train", "preprocess", i), x) for i, x in enumerate(train.preprocess)],
        "augment": [(("data", "train", "augment", i), x) for i, x in enumerate(train.augment)],
        "losses": [(("losses", name), loss) for name, loss in spec.losses.items()],
        "metrics": [(("metrics", n, i), x) for n, metrics in spec.metrics.items() for i, x in enumerate(metrics)],
        "optimizer": [(("optimizer",), spec.optimizer)],
    }


def spec_references(spec: Spec) -> list[tuple[tuple, str]]:
    """(location, reference) for every custom reference of the spec, each once."""
    found: dict[str, tuple] = {}
    for part, located in spec_objects(spec).items():
        for where, reference, _ in references_in(located, PLACES[part]):
            found.setdefault(reference, where)
    return [(where, reference) for reference, where in found.items()]


def check_arguments(name: str, args: dict[str, Any], loc: tuple) -> Iterator[tuple[tuple, str | None, str | None]]:
    """A custom object's nested `{type: ...}` arguments (its other arguments are not typed):
    (location, None, kind) for one to check as that kind of object, (location, message, None)
    for one tfgen cannot build."""
    for arg, value in args.items():
        if not (isinstance(value, dict) and isinstance(value.get("type"), str)):
            continue
        inner = catalog.nested_kind(str(arg), value["type"])
        if inner is None:
            message = (
                f"`{value['type']}` under `{arg}` of `{name}`: tfgen builds a nested object only under an "
                "argument ending in `_regularizer`, `_initializer`, `_constraint` or `learning_rate`, or of a "
                "Keras class of one kind"
            )
            yield (*loc, arg, "type"), message, None
        else:
            yield (*loc, arg), None, inner


# Names the script's functions use: a reference named so is bound as `custom_<Name>` instead.
TAKEN = frozenset(
    [
        "keras",
        "tf",
        "rt",
        "np",
        "os",
        "sys",
        "time",
        "Path",
        "functools",
        "SPEC_DIR",
        "INPUTS",
        "inputs",
        "x",
        "h",
        "branches",
        "branch",
        "outputs",
        "output",
        "model",
        "any",
        "preprocessed",
        "learning_rate",
        "optimizer",
        "plateau",
        "WarmUp",
        "ScaledOnPlateau",
    ]
)


def local_name(reference: str) -> str:
    """The name the script binds `module:Name` to where it uses it: `Name`, unless the
    function already uses that name."""
    name = class_name(reference)
    return f"custom_{name}" if name in TAKEN or name.startswith("shortcut") else name


def clashes(data: Any, loc: tuple = ()) -> Iterator[tuple[tuple, str]]:
    """(location, message) for each reference of the YAML data whose `Name` an earlier one from
    another module has (the script binds each by its name)."""
    seen: dict[str, str] = {}
    for where, node in _typed_nodes(data, loc):
        reference = node["type"]
        earlier = seen.setdefault(local_name(reference), reference)
        if earlier != reference:
            yield (
                (*where, "type"),
                (
                    f"`{reference}` and `{earlier}` have the same name: the script binds each by its name, "
                    "so give one another name (or import it under one in a module of yours)"
                ),
            )


def _typed_nodes(data: Any, loc: tuple) -> Iterator[tuple[tuple, dict]]:
    if isinstance(data, dict):
        if is_custom(data.get("type")):
            yield loc, data
        for key, value in data.items():
            yield from _typed_nodes(value, (*loc, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _typed_nodes(value, (*loc, i))

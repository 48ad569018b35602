"""`--deep` and the user's own objects (`type: "module:Name"`): each imported under the lookup,
place and trust rule of builders and `python` sources, and made as the script makes it, through the
support module's own code (`per_example_loss`, `keyed_inputs`), so that what `--deep` accepts
the script does too."""

from __future__ import annotations

from typing import Any

from tfgen.check.modules import runtime_module
from tfgen.spec import catalog
from tfgen.spec.custom_objects import local_name, references_in


def runtime():
    """The support module the scripts call as `rt.per_example_loss` and `rt.keyed_inputs`
    (the installed runtime's `tfgen_runtime/custom.py`, imported alone: not the whole package)."""
    return runtime_module("custom")


def custom_names(checker, obj: Any, kind: str, loc: tuple) -> dict[str, Any] | None:
    """The names the constructor text of `obj` (a Keras object of `kind`) uses for the user's
    objects, each imported at its place (and `rt` when it names one); {} when it names none;
    None, with an issue, when one cannot be imported or does not fit its place."""
    names: dict[str, Any] = {}
    for where, reference, place in references_in([(loc, obj)], kind):
        imported = checker.function(reference, where, place)
        if imported is None:
            return None
        names[local_name(reference)] = imported
    if names:
        names["rt"] = runtime()
    return names


def keyed(checker, model: Any, loc: tuple) -> Any:
    """A builder's model as the script keys it (`rt.keyed_inputs`: one tensor input taken from
    the dict by name); None, with an issue, when it is no keras.Model or cannot be keyed."""
    if not isinstance(model, checker.keras.Model):
        checker.fail(loc, f"`{checker.spec.model.builder}` returned a {type(model).__name__}, not a keras.Model")
        return None
    try:
        return runtime().keyed_inputs(model, checker.spec.model.inputs)
    except Exception as error:  # the support module's UserError, or Keras refusing the model
        checker.fail(loc, str(error).splitlines()[0] if str(error) else type(error).__name__)
        return None


def metric_params(name: str) -> list[str]:
    """A Keras metric's constructor arguments (none known for the user's own)."""
    return catalog.classes("metrics").get(name, {}).get("params", [])

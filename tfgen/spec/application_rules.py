"""Checks of `{application: ...}` and `{application_preprocess: ...}` layer items against the
catalog's `keras.applications` constructors and their own arguments."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfgen.errors import SpecIssue
from tfgen.spec import catalog
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models.applications import ApplicationSpec

# Constructor arguments tfgen sets itself, with why.
OWNED = {
    "include_top": "a backbone never has its classifier top (`include_top` is always false): remove it",
    "input_shape": "the backbone takes the shape of the tensor it is applied to: remove `input_shape`",
    "input_tensor": "the backbone is applied to the previous layer's output: remove `input_tensor`",
    "classes": "a backbone has no classifier top, so no `classes`: add a head in `model.outputs`",
    "classifier_activation": "a backbone has no classifier top: remove `classifier_activation`",
}
ITEM_KEYS = ("application", "application_preprocess")


def is_application_item(node: Any) -> bool:
    return isinstance(node, dict) and "type" not in node and any(key in node for key in ITEM_KEYS)


def application_issues(doc: Located, node: dict, loc: Loc) -> Iterator[SpecIssue]:
    """The issues of one application item (its structure is pydantic's to check)."""
    key = "application" if "application" in node else "application_preprocess"
    name = node[key]
    known = catalog.applications()
    if not isinstance(name, str):
        return
    if name not in known:
        yield doc.issue((*loc, key), f"unknown Keras application `{name}`{catalog.did_you_mean(name, list(known))}")
        return
    if key == "application":
        yield from _argument_issues(doc, node, loc, name)


def _argument_issues(doc: Located, node: dict, loc: Loc, name: str) -> Iterator[SpecIssue]:
    params = catalog.applications()[name]["params"]
    for arg, value in node.items():
        if arg in ApplicationSpec.own_keys:
            continue
        if arg in OWNED:
            yield doc.issue((*loc, arg), OWNED[arg], key=True)
        elif arg not in params:
            own = [*params, *ApplicationSpec.own_keys]
            hint = catalog.did_you_mean(str(arg), own) or f"; it takes: {', '.join(own)}"
            yield doc.issue((*loc, arg), f"`{name}` has no argument `{arg}`{hint}", key=True)
        elif (problem := catalog.application_type_error(name, str(arg), value)) is not None:
            yield doc.issue((*loc, arg), problem)

"""How spec values become code: Python literals, Keras constructor calls and keyword arguments
(the model's wiring is tfgen.generate.wiring). Spec values reach the code only through `literal()` (a Python literal, never
spliced text), or as constructor calls built from validated class and argument names."""

from __future__ import annotations

import keyword
from dataclasses import dataclass, field
from typing import Any

from tfgen.generate.views import Keywords
from tfgen.spec import catalog
from tfgen.spec.custom_objects import is_custom, local_name
from tfgen.spec.models import KerasObject
from tfgen.spec.models.applications import ApplicationSpec
from tfgen.spec.support import INTEGER_ADAPTED, sized_by_vocabulary


def literal(value: Any) -> str:
    """A Python literal for plain spec data (str, number, bool, None, list, tuple, dict)."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, float, str)):
        return repr(value)
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot emit {type(value).__name__} as a literal")


def keras_call(obj: KerasObject | dict, kind: str, extra: dict[str, str] | None = None) -> str:
    """`keras.<namespace>.<Class>(arg=value, ...)`, with nested Keras objects constructed too."""
    if isinstance(obj, dict):
        name, args = obj["type"], {k: v for k, v in obj.items() if k != "type"}
    else:
        name, args = obj.type, obj.args
    extra = extra or {}  # tfgen's own arguments, in place of the spec's of the same name
    parts = [f"{arg}={argument(arg, value)}" for arg, value in args.items() if arg not in extra]
    if is_custom(name) and kind == "losses":  # made per-example by the runtime (no `reduction`)
        given = [f"{literal(arg)}: {argument(arg, value)}" for arg, value in args.items()]
        return f"rt.per_example_loss({local_name(name)}{', {' + ', '.join(given) + '}' if given else ''})"
    parts += [f"{arg}={code}" for arg, code in extra.items()]
    if is_custom(name):  # the user's own class, bound to its name where it is used
        return f"{local_name(name)}({', '.join(parts)})"
    return f"{catalog.NAMESPACE[kind]}.{name}({', '.join(parts)})"


def argument(name: str, value: Any) -> str:
    """One constructor argument: a nested Keras object, or a literal."""
    if isinstance(value, dict) and "type" in value:
        return keras_call(value, catalog.nested_kind(name, value["type"]))
    return literal(value)


def keywords(kwargs: dict[str, Any]) -> Keywords | None:
    """Keyword arguments as `name=value` when every key is an identifier, else `**{...}`;
    None: no arguments."""
    if not kwargs:
        return None
    if all(isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k) for k in kwargs):
        return Keywords(named={k: literal(v) for k, v in kwargs.items()})
    return Keywords(unpacked=literal(kwargs))


@dataclass
class Adapted:
    """The adapted layers of a model, as the script finds them, gathered while its lines are
    planned (in the order the model applies them)."""

    batches: dict[str, int] = field(default_factory=dict)  # layer name -> training batches
    # layer name -> a fresh copy's constructor call, for each lookup whose width is its vocabulary's
    # size: the script adapts the copy to find that size before it builds the model
    copies: dict[str, str] = field(default_factory=dict)


# Adapted layers that learn outside variables, and the dtype of the copy the checkpoint keeps.
KEPT_OUTSIDE = {
    "Discretization": "float32",
    "IntegerLookup": "int64",
    "StringLookup": "string",
    "TextVectorization": "string",
}


def application_call(item: ApplicationSpec) -> str:
    """`rt.application(keras.applications.<Name>, weights=..., arguments={...})`: a function
    that builds the backbone (no top) on the shape of the tensor it is applied to."""
    parts = [f"keras.applications.{item.application}", f"weights={literal(item.weights)}"]
    if item.name is not None:
        parts.append(f"name={literal(item.name)}")
    if not item.trainable:
        parts.append("trainable=False")
    if item.batchnorm is not None:
        parts.append(f"batchnorm={literal(item.batchnorm)}")
    if item.args:
        parts.append(f"arguments={literal(item.args)}")
    return f"rt.application({', '.join(parts)})"


def adapted_arguments(item: Any, adapted: Adapted, mixed: bool) -> dict[str, str]:
    """The arguments tfgen adds to an adapted layer's call (its name, float32 under mixed
    precision, the width of a lookup sized by its vocabulary), recording it in `adapted`;
    none for other layers."""
    if not getattr(item, "adapt_batches", None):
        return {}
    name = item.args.get("name") or _adapted_name(item.type, adapted.batches)
    adapted.batches[name] = item.adapt_batches
    extra = {} if "name" in item.args else {"name": literal(name)}
    if mixed and "dtype" not in item.args and item.type not in INTEGER_ADAPTED:
        extra["dtype"] = literal("float32")
    if sized_by_vocabulary(item):  # `build_model(vocabulary_sizes)`: the size found by adapting a copy
        adapted.copies[name] = keras_call(item, "layers")
        extra |= {"max_tokens": f"vocabulary_sizes[{literal(name)}]", "pad_to_max_tokens": "True"}
    return extra


def _adapted_name(layer_type: str, taken: dict[str, int]) -> str:
    """`adapted_normalization`, then `_2`...: Keras never names an unnamed layer `adapted_*`."""
    base = "adapted_" + "".join(f"_{c.lower()}" if c.isupper() else c for c in layer_type).lstrip("_")
    number = 1
    while (base if number == 1 else f"{base}_{number}") in taken:
        number += 1
    return base if number == 1 else f"{base}_{number}"


def float32_head(layers: list) -> list:
    """The head's layers with the last one computing in float32 (losses never run in float16)."""
    if layers and isinstance(layers[-1], KerasObject):
        last = layers[-1]
        if "dtype" in last.args:
            return layers  # an explicit dtype: validation checked it is float32
        return [*layers[:-1], last.model_copy(update={"args": {**last.args, "dtype": "float32"}})]
    return [*layers, KerasObject.model_construct(type="Activation", args={"activation": "linear", "dtype": "float32"})]

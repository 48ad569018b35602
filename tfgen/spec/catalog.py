"""The committed catalog of Keras classes and constructor arguments (no TensorFlow import)."""

from __future__ import annotations

import difflib
import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

CATALOG_PATH = Path(__file__).with_name("keras_catalog.json")

# Singular nouns for messages, and the Python namespace each kind is emitted from.
KIND_NOUN = {
    "layers": "layer",
    "losses": "loss",
    "metrics": "metric",
    "optimizers": "optimizer",
    "schedules": "learning-rate schedule",
    "regularizers": "regularizer",
    "initializers": "initializer",
    "constraints": "constraint",
}
NAMESPACE = {
    "layers": "keras.layers",
    "losses": "keras.losses",
    "metrics": "keras.metrics",
    "optimizers": "keras.optimizers",
    "schedules": "keras.optimizers.schedules",
    "regularizers": "keras.regularizers",
    "initializers": "keras.initializers",
    "constraints": "keras.constraints",
}
# Constructor arguments that take a nested Keras object, by suffix of the argument name.
NESTED_KIND_BY_SUFFIX = {
    "_regularizer": "regularizers",
    "_initializer": "initializers",
    "_constraint": "constraints",
    "learning_rate": "schedules",
}


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    return json.loads(CATALOG_PATH.read_text())


def classes(kind: str) -> dict[str, dict[str, Any]]:
    return load()["kinds"][kind]


def keras_version() -> str:
    return load()["keras_version"]


def closest(word: str, candidates: list[str] | tuple[str, ...] | set[str]) -> str | None:
    """The closest candidate to `word`, case-insensitively, or None."""
    lowered = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[match[0]] if match else None


def did_you_mean(word: str, candidates) -> str:
    match = closest(word, candidates)
    return f"; did you mean `{match}`?" if match else ""


def nested_kind(argument: str, class_name: str) -> str | None:
    """Which kind of Keras object a nested `{type: ...}` under `argument` is."""
    for suffix, kind in NESTED_KIND_BY_SUFFIX.items():
        if argument.endswith(suffix):
            return kind
    owners = [kind for kind in KIND_NOUN if class_name in classes(kind)]
    return owners[0] if len(owners) == 1 else None


# --- argument types (see scripts/extract_keras_catalog.py for what each alternative means) ------

NAME_NOUN = {**KIND_NOUN, "activations": "activation"}  # nouns of the kinds whose names `keras.<kind>.get` resolves


def argument_type(kind: str, class_name: str, argument: str) -> list[dict[str, Any]] | None:
    """The alternatives a value of `argument` may take, or None when any value may do."""
    return classes(kind)[class_name].get("types", {}).get(argument)


def names(kind: str) -> list[str]:
    """The names `keras.<kind>.get` resolves (`he_normal`, `relu`, ...)."""
    return load()["names"][kind]


def in_bounds(value: float, alt: dict[str, Any]) -> bool:
    """Whether a number is within a numeric alternative's `min`/`max` (excluded when `open`)."""
    low, high, open_ = alt.get("min"), alt.get("max"), alt.get("open", False)
    if low is not None and (value < low or (open_ and value == low)):
        return False
    return not (high is not None and (value > high or (open_ and value == high)))


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def accepts(alt: dict[str, Any], value: Any) -> bool:
    what = alt["is"]
    if what == "null":
        return value is None
    if what == "bool":
        return isinstance(value, bool)
    if what == "int":
        return _is_int(value) and in_bounds(value, alt)
    if what == "ints":
        return isinstance(value, list) and bool(value) and all(_is_int(v) for v in value)
    if what == "number":
        kinds = (float,) if alt.get("float") else (int, float)
        return isinstance(value, kinds) and not isinstance(value, bool) and in_bounds(value, alt)
    if what == "choice":
        if not isinstance(value, str):
            return False
        return value.lower() in (v.lower() for v in alt["of"]) if alt.get("nocase") else value in alt["of"]
    if what == "list":
        return isinstance(value, list)
    if what == "name":
        return isinstance(value, str) and value in names(alt["kind"])
    return isinstance(value, dict) and "type" in value  # an object: its class and arguments are checked apart


def _number_words(alt: dict[str, Any], noun: str) -> str:
    low, high, open_ = alt.get("min"), alt.get("max"), alt.get("open", False)
    if noun == "integer" and (low, high) == (1, None):
        return "a positive integer"
    if noun == "integer" and (low, high) == (0, None):
        return "a non-negative integer"
    article = "an" if noun == "integer" else "a"
    if low is not None and high is not None:
        return f"{article} {noun} {'strictly ' if open_ else ''}between {low} and {high}"
    if low is not None:
        return f"{article} {noun} {'>' if open_ else '>='} {low}"
    if high is not None:
        return f"{article} {noun} {'<' if open_ else '<='} {high}"
    return f"{article} {noun}"


def describe(alternatives: list[dict[str, Any]]) -> str:
    """`alternatives` in words: "a positive integer", "a number or a learning-rate schedule `{type: ...}`"."""
    parts: list[str] = []
    kinds_named = {alt["kind"] for alt in alternatives if alt["is"] == "name"}
    for alt in alternatives:
        what = alt["is"]
        if what in ("int", "number"):
            parts.append(_number_words(alt, "integer" if what == "int" else "float" if alt.get("float") else "number"))
        elif what == "list":
            parts.append("a list")
        elif what == "ints":
            parts.append("a list of integers")
        elif what == "bool":
            parts.append("true or false")
        elif what == "choice":
            parts.append("one of " + ", ".join(json.dumps(v) for v in alt["of"]))
        elif what == "name":
            noun = NAME_NOUN[alt["kind"]]
            article = "an" if noun[0] in "aeiou" else "a"
            nested = any(a["is"] == "object" and a["kind"] == alt["kind"] for a in alternatives)
            parts.append(f"{article} {noun}{' (a name or `{type: ...}`)' if nested else ' name'}")
        elif what == "object" and alt["kind"] not in kinds_named:
            noun = KIND_NOUN[alt["kind"]]
            parts.append(f"a {noun} `{{type: ...}}`")
    if any(alt["is"] == "null" for alt in alternatives):
        parts.append("null")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def shown(value: Any) -> str:
    """A spec value as the user wrote it, for messages."""
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return f"`{{type: {value['type']}}}`"
    if isinstance(value, dict):
        return "a mapping"
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def type_error(kind: str, class_name: str, argument: str, value: Any) -> str | None:
    """Why `value` is not an accepted value of `argument` (None when it is, or cannot be known)."""
    alternatives = argument_type(kind, class_name, argument)
    if alternatives is None or any(accepts(alt, value) for alt in alternatives):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None  # reported as such by the check for finite literals (crosscheck._finite)
    if isinstance(value, dict) and "type" in value and any(alt.get("kind") == "activations" for alt in alternatives):
        return None  # a layer as an activation (`{type: ReLU}`) is a callable Keras takes
    message = f"{class_name} expects {describe(alternatives)}, got {shown(value)}"
    if _is_int(value) and any(alt.get("float") for alt in alternatives):
        return message + f"; Keras wants a float here: write `{value}.0`"
    if isinstance(value, float) and value.is_integer() and any(alt["is"] == "int" for alt in alternatives):
        return message + f"; write `{int(value)}`"
    if isinstance(value, str) and _numeric(value) and any(alt["is"] in ("int", "number") for alt in alternatives):
        return message + "; write the number without quotes"
    if isinstance(value, str):
        words = [v for alt in alternatives if alt["is"] == "choice" for v in alt["of"]]
        words += [n for alt in alternatives if alt["is"] == "name" for n in names(alt["kind"])]
        message += did_you_mean(value, words)
    return message


def _numeric(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


# --- keras.applications ------------------------------------------------------------------------


def applications() -> dict[str, dict[str, Any]]:
    """Each `keras.applications` constructor: its own `params` and their `types`, and its family's
    `module` (where its `preprocess_input` is)."""
    return load()["applications"]


def application_type_error(name: str, argument: str, value: Any) -> str | None:
    """Why `value` is not an accepted value of an application's argument (None when it is)."""
    alternatives = applications()[name]["types"].get(argument)
    if alternatives is None or any(accepts(alt, value) for alt in alternatives):
        return None
    return f"{name} expects {describe(alternatives)}, got {shown(value)}"

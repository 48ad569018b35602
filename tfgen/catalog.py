"""The committed catalog of Keras classes and constructor arguments (no TensorFlow import)."""

from __future__ import annotations

import difflib
import json
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

"""Loading a spec: read its YAML, follow `extends`, apply `--set`, validate into a Spec.

Every tool that reads a spec (build, check, diff, validate, smoke, manifest) loads it here, so
each refuses a spec with the same rules.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from tfgen.errors import SpecError, SpecIssue
from tfgen.paths import display_path
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec
from tfgen.spec.resolve import resolve
from tfgen.spec.validate import validate

T = TypeVar("T")


class Loaded(NamedTuple):
    """One resolved and valid spec: its path as messages show it, its located document, the Spec."""

    shown: str
    doc: Located
    spec: Spec


def load_spec(path: Path, overrides: list[str] | tuple[str, ...] = ()) -> Loaded:
    """Resolve `path` (following `extends`, applying `--set` overrides) and validate it; SpecError if invalid."""
    shown = display_path(path)
    doc = resolve(path, shown, overrides)
    return Loaded(shown, doc, validate(doc))


class Issues:
    """The problems of many specs, gathered so that one SpecError reports all of them."""

    def __init__(self) -> None:
        self.found: list[SpecIssue] = []

    def attempt(self, function: Callable[..., T], *args: Any) -> T | None:
        """`function(*args)`, or None when it raised SpecError (whose problems are kept)."""
        try:
            return function(*args)
        except SpecError as error:
            self.found.extend(error.issues)
            return None

    def raise_any(self) -> None:
        if self.found:
            raise SpecError(self.found)

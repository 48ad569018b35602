"""A sweep's search space: `path=expression` entries, parsed without Optuna.

An expression is `log(a,b)` (a float drawn log-uniformly), `uniform(a,b)` (a float), `int(a,b)`
(an integer, both ends included) or `[x,y,...]` (one of the values, each read as YAML: numbers,
booleans, strings). Parsing and checking need no Optuna: `tfgen validate` checks a spec's
`sweep.space` on a machine without it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import yaml

RANGE = re.compile(r"\s*(log|uniform|int)\s*\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*\)\s*\Z")
FORMS = "`log(a,b)`, `uniform(a,b)`, `int(a,b)` or `[x,y,...]`"


@dataclass(frozen=True)
class Param:
    """One dimension of the space: a range (`kind` log, uniform or int) or `choices`."""

    path: str
    kind: str  # "log", "uniform", "int" or "choice"
    low: float = 0
    high: float = 0
    choices: tuple[Any, ...] = ()

    def extremes(self) -> tuple[Any, ...]:
        """The values that stand for the whole dimension when the spec is checked with them."""
        return self.choices or (self.low, self.high)

    def suggest(self, trial) -> Any:
        """This dimension's value for an Optuna trial."""
        if self.kind == "choice":
            return trial.suggest_categorical(self.path, list(self.choices))
        if self.kind == "int":
            return trial.suggest_int(self.path, self.low, self.high)
        return trial.suggest_float(self.path, self.low, self.high, log=self.kind == "log")

    def shown(self) -> str:
        if self.kind == "choice":
            return "[" + ",".join(map(str, self.choices)) + "]"
        return f"{self.kind}({self.low},{self.high})"


def parse_expression(path: str, expression: Any) -> Param:
    """The Param of `expression` (a string, or a list of choices); ValueError saying what is wrong."""
    if isinstance(expression, list):
        return _choices(path, expression)
    if not isinstance(expression, str):
        raise ValueError(f"expected {FORMS}, found {expression!r}")  # noqa: TRY004 (pydantic reports ValueError)
    text = expression.strip()
    if text.startswith("["):
        try:
            values = yaml.safe_load(text)
        except yaml.YAMLError:
            values = None
        if not isinstance(values, list):
            raise ValueError(f"`{expression}` is not a list of values `[x,y,...]`")
        return _choices(path, values)
    found = RANGE.match(text)
    if not found:
        raise ValueError(f"`{expression}` is not a search space: expected {FORMS}")
    kind, low, high = found.groups()
    return _range(path, kind, _number(low, kind, expression), _number(high, kind, expression))


def _number(text: str, kind: str, expression: str) -> float:
    try:
        value = int(text) if kind == "int" else float(text)
    except ValueError:
        wanted = "an integer" if kind == "int" else "a number"
        raise ValueError(f"`{expression}`: `{text}` is not {wanted}") from None
    if not math.isfinite(value):
        raise ValueError(f"`{expression}`: `{text}` is not a finite number")
    return value


def _range(path: str, kind: str, low: float, high: float) -> Param:
    if not low < high:
        raise ValueError(f"`{kind}({low},{high})`: the low end must be below the high end")
    if kind == "log" and low <= 0:
        raise ValueError(f"`log({low},{high})`: a log range must be above 0")
    return Param(path, kind, low, high)


def _choices(path: str, values: list) -> Param:
    if not values:
        raise ValueError("an empty list of choices: give at least one value")
    for value in values:
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise ValueError(f"a choice must be a number, a boolean or a string, found {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"a choice must be finite, found {value!r}")
    if len(set(map(repr, values))) < len(values):
        raise ValueError(f"a choice is listed twice in {values!r}")
    return Param(path, "choice", choices=tuple(values))


def parse_option(text: str) -> Param:
    """`--space PATH=EXPRESSION`; ValueError naming the argument."""
    path, sep, expression = text.partition("=")
    if not sep or not path.strip():
        raise ValueError(f"--space `{text}`: expected `dotted.path=expression` ({FORMS})")
    try:
        return parse_expression(path.strip(), expression)
    except ValueError as error:
        raise ValueError(f"--space {path.strip()}: {error}") from None


def location(path: str) -> tuple[str | int, ...]:
    """`model.layers.1.units` as a spec location: digits are list indices."""
    return tuple(int(part) if part.isascii() and part.isdigit() else part for part in path.split("."))

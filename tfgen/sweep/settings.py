"""What a sweep is: its settings (the spec's `sweep` section, then the command line) and each
trial's spec (the spec with the trial's values set), checked before any trial runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from tfgen.errors import SpecError, UsageError
from tfgen.spec.load import Loaded
from tfgen.spec.loader import Located
from tfgen.spec.models.sweep import Sweep
from tfgen.spec.resolve import set_value
from tfgen.spec.sweep_space import Param, location, parse_expression, parse_option
from tfgen.spec.validate import validate


@dataclass(frozen=True)
class Settings:
    """One sweep: the loaded spec, its search space and how trials are counted and ranked."""

    loaded: Loaded
    params: tuple[Param, ...]
    trials: int
    monitor: str
    mode: str
    pruner: str
    startup_trials: int
    warmup_epochs: int
    seed: int | None
    from_spec: frozenset[str]  # the paths whose expressions the spec's `sweep.space` gives

    @property
    def name(self) -> str:
        return self.loaded.spec.name


def settings(loaded: Loaded, args) -> Settings:
    """The sweep of `loaded` with the command line's options; UsageError or SpecError (one line
    each) for a space that is missing, malformed or names a place the spec does not set."""
    section = loaded.spec.sweep or Sweep.model_construct(space={})  # the defaults
    given = {path: parse_expression(path, text) for path, text in section.space.items()}
    space = {**given, **_option_space(args.space)}
    if not space:
        raise UsageError("no search space: give `--space PATH=EXPRESSION` or a `sweep.space` in the spec")
    found = Settings(
        loaded,
        tuple(space.values()),
        args.trials or section.trials,
        args.monitor or section.monitor,
        args.mode or section.mode,
        section.pruner,
        section.startup_trials,
        section.warmup_epochs,
        section.seed,
        frozenset(path for path, param in space.items() if given.get(path) is param),
    )
    for param in found.params:
        check_param(found, param)
    return found


def _option_space(texts: list[str]) -> dict[str, Param]:
    """The dimensions given by `--space` options (a later one wins)."""
    space = {}
    for text in texts:
        try:
            param = parse_option(text)
        except ValueError as error:
            raise UsageError(str(error)) from None
        space[param.path] = param
    return space


def check_param(settings: Settings, param: Param) -> None:
    """Raise the one-line error of a dimension whose place is not in the spec, or one of whose
    values makes the spec invalid."""
    doc = settings.loaded.doc
    if not _exists(doc.data, location(param.path)):
        _refuse(settings, param, "no such place in the spec (a sweep varies values the spec sets)")
    for value in param.extremes():
        try:
            trial_doc(doc, {param.path: value})
        except SpecError as error:
            first = error.issues[0]
            _refuse(settings, param, f"{value!r} makes the spec invalid: {first.field}: {first.message}")


def _refuse(settings: Settings, param: Param, message: str):
    if param.path in settings.from_spec:
        loc = ("sweep", "space", param.path)
        raise SpecError([settings.loaded.doc.issue(loc, message)])
    raise UsageError(f"--space {param.path}: {message}")


def _exists(data: Any, loc: tuple) -> bool:
    for part in loc:
        if (isinstance(data, dict) and part in data) or (
            isinstance(data, list) and isinstance(part, int) and part < len(data)
        ):
            data = data[part]
        else:
            return False
    return True


def trial_doc(doc: Located, values: dict[str, Any]) -> Located:
    """The spec with `values` set at their paths, without its `sweep` and `extends`, validated
    (SpecError if invalid)."""
    for path, value in values.items():
        doc = set_value(doc, location(path), value, f"sweep value {path}")
    data = {key: value for key, value in doc.data.items() if key not in ("sweep", "extends")}
    doc = Located(data, doc.path, doc.values, doc.keys)
    validate(doc)
    return doc


def trial_text(doc: Located, values: dict[str, Any], header: str) -> str:
    """The YAML of a trial's spec: the same bytes for the same values (best.yaml is one too)."""
    body = yaml.safe_dump(trial_doc(doc, values).data, sort_keys=False, allow_unicode=True)
    return "".join(f"# {line}\n" for line in header.splitlines()) + body

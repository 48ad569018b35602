"""`tfgen init`: a commented starter spec that validates and builds as written."""

from __future__ import annotations

import os
from pathlib import Path

from tfgen.errors import SpecError, UsageError
from tfgen.generate.build import write_atomically
from tfgen.generate.render import environment
from tfgen.paths import display_path, project_root
from tfgen.spec.loader import load_text
from tfgen.spec.models.base import _identifier
from tfgen.spec.validate import validate


def write_starter(name: str, folder: Path) -> str:
    """Write `<folder>/<name>.yaml`; refuse a bad name or an existing file. Returns its path."""
    try:
        _identifier(name)
    except ValueError as error:
        raise UsageError(f"bad NAME: {error}") from None
    path = folder / f"{name}.yaml"
    if path.exists():
        raise UsageError(f"{display_path(path)} exists; pick another NAME or remove it")
    schema = project_root(Path.cwd().resolve()) / "tfgen.schema.json"
    schema_ref = os.path.relpath(schema, folder.resolve()).replace(os.sep, "/")
    text = (
        environment()
        .get_template("starter.yaml.jinja")
        .render(name=name, spec_path=display_path(path), schema_ref=schema_ref)
    )
    _require_valid(text, display_path(path))
    write_atomically(path, text)
    return display_path(path)


def _require_valid(text: str, shown: str) -> None:
    """UsageError when the starter would not validate, so not build: the rules on the script's
    name (`keras.yaml` would write keras.py, which shadows Keras) refuse some names."""
    try:
        validate(load_text(text, shown))
    except SpecError as error:
        raise UsageError("bad NAME: " + "; ".join(issue.message for issue in error.issues)) from None

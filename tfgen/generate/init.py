"""`tfgen init`: a commented starter spec that validates and builds as written."""

from __future__ import annotations

import os
from pathlib import Path

from tfgen.errors import UsageError
from tfgen.generate.build import write_atomically
from tfgen.generate.render import environment
from tfgen.paths import display_path, project_root
from tfgen.spec.models.base import _identifier


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
    write_atomically(path, text)
    return display_path(path)

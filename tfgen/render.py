"""Render a planned view through the Jinja templates and format the result with black."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import black
import jinja2

from . import __version__
from .plan import literal, make_view
from .spec import Spec

# Fixed black mode: the output must not depend on any project's black configuration.
BLACK_MODE = black.Mode(target_versions={black.TargetVersion.PY310}, line_length=100)


def templates_dir() -> Path:
    """Templates ship inside the wheel as tfgen/templates; a source checkout has them at the root."""
    packaged = Path(__file__).with_name("templates")
    return packaged if packaged.is_dir() else Path(__file__).resolve().parent.parent / "templates"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    # Every spec value that lands in code goes through `py`: a Python literal, never raw text.
    env.filters["py"] = literal
    return env


def render(spec: Spec, *, spec_path: str, sha256: str, resolved: dict | None = None) -> str:
    """The generated training script for `spec`, black-formatted."""
    # The path lands in a comment: escape anything (a newline, say) that could end it.
    shown = json.dumps(spec_path, ensure_ascii=False)[1:-1]
    view = make_view(spec, spec_path=shown, spec_sha256=sha256, version=__version__, resolved=resolved)
    source = environment().get_template("train.py.jinja").render(v=view)
    return black.format_str(source, mode=BLACK_MODE)

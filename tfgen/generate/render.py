"""Render a planned view through the Jinja templates and format the result with black."""

from __future__ import annotations

from functools import lru_cache

import black
import jinja2

from tfgen import __version__
from tfgen.generate import sources_dir, templates_dir
from tfgen.generate.algorithms.registry import plan
from tfgen.generate.code import literal
from tfgen.generate.views import TEMPLATE_ENUMS
from tfgen.spec.models import Spec

# black's default mode, as a user's stock `black` runs it: generated files must pass their
# `black --check` unchanged, whatever black configuration tfgen's own checkout has.
BLACK_MODE = black.Mode()


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        # The script's templates, then the sources' units (`<type>/source.py.jinja`, tfgen/sources/).
        loader=jinja2.FileSystemLoader([str(templates_dir()), str(sources_dir())]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    # Every spec value that lands in code goes through `py`: a Python literal, never raw text.
    env.filters["py"] = literal
    # Templates test the view's enums by member (`x is sameas Jit.GPU`), never by their strings.
    env.globals.update({kind.__name__: kind for kind in TEMPLATE_ENUMS})
    env.tests["sameas"] = same_member
    return env


def same_member(value: object, other: object) -> bool:
    """Jinja's `sameas`, except that an undefined side (a misspelt member or view field) fails
    the render instead of testing False: `is` never touches StrictUndefined's guards."""
    for side in (value, other):
        if isinstance(side, jinja2.Undefined):
            side._fail_with_undefined_error()
    return value is other


def render(spec: Spec, *, spec_path: str, sha256: str, spec_dir: str, vendored: bool = False) -> str:
    """The generated training script for `spec`, black-formatted (`spec_dir`, `vendored`: see make_view)."""
    template, views = plan(
        spec, spec_path=spec_path, spec_sha256=sha256, version=__version__, spec_dir=spec_dir, vendored=vendored
    )
    source = environment().get_template(template).render(**views)
    return black.format_str(source, mode=BLACK_MODE)

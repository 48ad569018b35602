"""Rules on the script a spec generates: its name, `<spec stem>.py`, beside the support package.

Python puts a script's folder first on `sys.path`, so the script's name must not be the name of
a module that the script, TensorFlow or Keras imports (nor of the support package), and a user
module the spec names must not have the script's name: either import would find the script.
`validate` applies these rules (through crosscheck.CHECKS), and so `build`, which validates.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from tfgen.errors import SpecIssue
from tfgen.sources import located_sources, unit_of
from tfgen.spec.custom_objects import spec_references
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec

RUNTIME_PACKAGE = "tfgen_runtime"  # the runtime package every script imports (installed, or vendored beside it)
# The top-level modules the training stack imports, recorded by scripts/extract_shadowed_modules.py.
SHADOWED_PATH = Path(__file__).with_name("shadowed_modules.json")


@functools.cache
def shadowed_modules() -> frozenset[str]:
    """Every top-level module a generated script may import: the standard library's and the
    training stack's (TensorFlow, Keras, NumPy, what they require and what they import)."""
    recorded = json.loads(SHADOWED_PATH.read_text(encoding="utf-8"))
    return frozenset(sys.stdlib_module_names).union(*recorded.values())


def script_stem(doc: Located) -> str:
    """The name of the script `doc` generates, without `.py`: the spec file's."""
    return PurePosixPath(doc.path.replace("\\", "/")).stem


def imported_references(spec: Spec) -> list[tuple[tuple[str, ...], str]]:
    """The `package.module:function` references the script imports, with their spec fields."""
    found = [
        ((*loc, field), getattr(source, field))
        for loc, source in located_sources(spec)
        if (field := unit_of(source).function_field)
    ]
    found += spec_references(spec)  # the user's own Keras objects (`type: "module:Name"`)
    return found + ([(("model", "builder"), spec.model.builder)] if spec.model.builder else [])


def _script_name(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """The script's name shadows neither the support package nor a module the script imports."""
    stem = script_stem(doc)
    name = PurePosixPath(doc.path).name
    if stem == RUNTIME_PACKAGE:
        message = f"a spec named `{name}` would be shadowed by the support package {RUNTIME_PACKAGE}/: rename it"
        yield SpecIssue(doc.path, 1, 1, "", message)
    elif stem in shadowed_modules():
        message = (
            f"a spec named `{name}` would generate {stem}.py, which would shadow the module `{stem}` (a "
            f"script's folder comes first on sys.path, so `import {stem}` would import the script): rename the spec"
        )
        yield SpecIssue(doc.path, 1, 1, "", message)


def _module_named_like_the_script(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """No user module the script imports has the script's name (it would import the script)."""
    stem = script_stem(doc)
    for loc, reference in imported_references(spec):
        if reference.partition(":")[0].split(".")[0] == stem:
            yield doc.issue(
                loc,
                f"module `{stem}` has the name of the script this spec generates ({stem}.py), which would "
                "import itself instead: rename the spec or the module",
            )


# Each check and the top-level sections it reads (see tfgen.spec.crosscheck.CHECKS).
SCRIPT_CHECKS = (
    (_script_name, set()),
    (_module_named_like_the_script, {"data", "model", "losses", "metrics", "optimizer"}),
)

"""The runtime the generated scripts import: the `tfgen-runtime` distribution (runtime/ in this
repository), the version this tfgen generates for, and its files for `tfgen build --vendor`.

The generator never imports the runtime's package to build a script: a script names
RUNTIME_VERSION and checks it. Only `--vendor` reads the installed runtime's files (and so
needs `tfgen-runtime` installed, at this version: `pip install "tfgen[train]"`).
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import black

from tfgen import __version__
from tfgen.errors import UsageError
from tfgen.spec.script_rules import RUNTIME_PACKAGE

# The runtime version the templates are written for; runtime/tfgen_runtime/version.py holds the
# runtime's own (tests/generate/test_runtime_contract.py keeps the two and pyproject's pin equal).
RUNTIME_VERSION = "0.7.0"
BLACK_MODE = black.Mode()  # black's default mode, as render.BLACK_MODE (which imports this module)


def install_command(version: str = RUNTIME_VERSION) -> str:
    """The command that installs the runtime `version`."""
    return f'pip install "tfgen-runtime=={version}"'


def missing_line(script: str) -> str:
    """The line a script prints when no runtime (with a version) can be imported."""
    return f"error: {script} needs tfgen-runtime {RUNTIME_VERSION}, found none: {install_command()}"


def installed_folder() -> Path:
    """The installed runtime's package folder, at RUNTIME_VERSION; UsageError (one line) if not."""
    try:
        found = importlib.util.find_spec(RUNTIME_PACKAGE)
    except ImportError:  # a finder that refuses it
        found = None
    if found is None or not found.submodule_search_locations:
        raise UsageError(f"--vendor copies the installed tfgen-runtime, and none is installed: {install_command()}")
    folder = Path(next(iter(found.submodule_search_locations)))
    version = _version_of(folder)
    if version != RUNTIME_VERSION:
        raise UsageError(
            f"--vendor copies the installed tfgen-runtime ({folder}), which is {version}; "
            f"this tfgen generates for {RUNTIME_VERSION}: {install_command()}"
        )
    return folder


def _version_of(folder: Path) -> str:
    """The `__version__` of the runtime in `folder`, read from its version.py without importing it."""
    try:
        text = (folder / "version.py").read_text(encoding="utf-8")
    except OSError:
        return "unknown"
    for line in text.splitlines():
        if line.startswith("__version__ = "):
            return line.partition("=")[2].strip().strip("\"'")
    return "unknown"


def runtime_files(folder: Path) -> list[str]:
    """The runtime's files, as paths relative to the output folder (POSIX), sorted."""
    return sorted(f"{RUNTIME_PACKAGE}/{path.name}" for path in folder.glob("*.py"))


@cache
def vendored_runtime() -> dict[str, str]:
    """The installed runtime as `--vendor` writes it beside the scripts, by file
    (`tfgen_runtime/cli.py`): each module under a header naming the runtime's version."""
    folder = installed_folder()
    header = f"# tfgen-runtime {RUNTIME_VERSION}, vendored by tfgen {__version__}. DO NOT EDIT.\n"
    return {
        name: black.format_str(header + (folder.parent / name).read_text(encoding="utf-8"), mode=BLACK_MODE)
        for name in runtime_files(folder)
    }

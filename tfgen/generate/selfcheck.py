"""What every generated file must pass before it is written: a generator bug never reaches a user
as a script that crashes. The checks are Python's own compiler and pyflakes (undefined and unused
names, redefinitions), the checks `ruff check --select F` makes."""

from __future__ import annotations

import ast

from pyflakes.checker import Checker

from tfgen.errors import UsageError


class GeneratorBug(UsageError):
    """tfgen generated a file that fails its own checks (exit code 2; nothing was written)."""


def problems(text: str, filename: str) -> list[str]:
    """Each problem in `text` as `line N: message`, the compiler's first, then pyflakes's."""
    try:
        tree = ast.parse(text, filename)
        compile(tree, filename, "exec")
    except SyntaxError as error:
        return [f"line {error.lineno}: {error.msg} (compile)"]
    found = Checker(tree, filename=filename).messages
    ordered = sorted(found, key=lambda message: (message.lineno, message.col))
    return [f"line {m.lineno}: {m.message % m.message_args} ({type(m).__name__})" for m in ordered]


def require_clean(text: str, filename: str, source: str) -> None:
    """Raise GeneratorBug naming `source` (the spec, or the support module) and the first problem."""
    found = problems(text, filename)
    if found:
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        raise GeneratorBug(
            f"tfgen bug: the script generated from {source} ({filename}) fails the generated-code "
            f"check: {found[0]}{more}; nothing was written (please report it with the spec)"
        )

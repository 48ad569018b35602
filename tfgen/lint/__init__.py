"""`tfgen lint`: known pitfalls of hand-written TensorFlow training loops, found statically.

Static analysis of the AST only: nothing is imported or run (not TensorFlow, not the linted code).
Precision over recall: each rule reports only what it can see for certain in one file, and stays
quiet when a name, a function or a pipeline comes from somewhere it cannot read.

A finding is `path:line:col: TFGnnn message` (line and column 1-based). `# tfgen: ignore[TFG001]`
(or `ignore[TFG001,TFG002]`) on the finding's line suppresses it. Each rule is one record in
`tfgen/lint/rules/` (code, name, message, documentation, check), registered by `@rule`.
"""

from __future__ import annotations

import ast
import re
import sys

import tfgen.lint.rules  # noqa: F401  (importing the package registers every rule)
from tfgen.lint.context import FileContext
from tfgen.lint.files import LintInputError, python_files, read_source, shown
from tfgen.lint.registry import RULES, Finding, Rule, position, rules_in_order
from tfgen.lint.report import rule_table, sarif, statistics_lines, text_lines, to_json

__all__ = [
    "RULES",
    "Finding",
    "LintInputError",
    "Rule",
    "lint_paths",
    "lint_source",
    "parse_codes",
    "rule_table",
    "run",
    "sarif",
]

IGNORE_COMMENT = re.compile(r"#\s*tfgen:\s*ignore\[([A-Za-z0-9_,\s]+)\]")
TOO_DEEP = (RecursionError, MemoryError)


def _ignored(lines: list[str], finding: Finding) -> bool:
    if finding.line - 1 >= len(lines):
        return False
    match = IGNORE_COMMENT.search(lines[finding.line - 1])
    if not match:
        return False
    return finding.code in {c.strip().upper() for c in match.group(1).split(",")}


def _findings_of(ctx: FileContext, rule: Rule) -> list[Finding]:
    found = []
    for where, fields in rule.check(ctx):
        line, column = position(where)
        found.append(Finding(ctx.path, line, column, rule.code, rule.format(fields)))
    return found


def lint_source(source: str, path: str = "<string>") -> list[Finding]:
    """All findings of one file's text (before --select/--ignore).

    SyntaxError, ValueError (null bytes), RecursionError and MemoryError (too deeply nested code) propagate."""
    tree = ast.parse(source, filename=path)
    ctx = FileContext(path, source, tree)
    findings = set()
    for rule in rules_in_order():
        findings.update(_findings_of(ctx, rule))
    return sorted(f for f in findings if not _ignored(ctx.lines, f))


def _lint_file(file, errors: list[str]) -> list[Finding]:
    display = shown(file)
    try:
        return lint_source(read_source(file), str(file))
    except LintInputError as error:
        errors.append(str(error))
    except SyntaxError as error:
        errors.append(f"{display}:{error.lineno or 1}:{error.offset or 1}: error: cannot parse: {error.msg}")
    except ValueError as error:
        errors.append(f"{display}:1:1: error: cannot parse: {error}")
    except TOO_DEEP as error:
        kind = type(error).__name__
        errors.append(f"{display}:1:1: error: cannot analyse: the code is nested too deeply ({kind})")
    return []


def lint_paths(paths, select=None, ignore=None) -> tuple[list[Finding], list[str], int]:
    """(findings, located errors, number of files) of every Python file under `paths`."""
    errors: list[str] = []
    files = python_files(paths, errors)
    findings = []
    for file in files:
        found = _lint_file(file, errors)
        findings.extend(f for f in found if (not select or f.code in select) and f.code not in (ignore or ()))
    return sorted(findings), errors, len(files)


def parse_codes(values) -> set[str]:
    codes = set()
    for value in values or []:
        for code in value.split(","):
            code = code.strip().upper()
            if code and code not in RULES:
                raise ValueError(f"unknown rule code {code!r} (known: {min(RULES)}..{max(RULES)})")
            if code:
                codes.add(code)
    return codes


def _print_text(findings, files: int, statistics: bool) -> None:
    for line in text_lines(findings):
        print(line)
    if statistics:
        for line in statistics_lines(findings):
            print(line)
    if findings or statistics:
        print(f"{len(findings)} finding(s) in {files} file(s)", file=sys.stderr)


def run(args) -> int:
    """The `tfgen lint` subcommand: 0 clean, 1 findings, 2 usage or unreadable input (errors win)."""
    try:
        select, ignore = parse_codes(args.select), parse_codes(args.ignore)
    except ValueError as error:
        print(f"tfgen: error: {error}", file=sys.stderr)
        return 2
    findings, errors, files = lint_paths(args.paths, select, ignore)
    for error in errors:
        print(error, file=sys.stderr)
    if args.format == "json":
        print(to_json(findings))
    elif args.format == "sarif":
        import json

        print(json.dumps(sarif(findings), indent=2))
    else:
        _print_text(findings, files, args.statistics)
    if errors:
        return 2
    return 1 if findings else 0

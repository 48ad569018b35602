"""The `tfgen` command line. Exit codes: 0 ok, 1 differences found, 2 invalid spec or usage."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tfgen import __version__
from tfgen.errors import SpecError, UsageError
from tfgen.stdout import reader_may_leave

EXIT_OK, EXIT_DIFFERENT, EXIT_INVALID = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors exit 2 without a traceback, as argparse does
        self.print_usage(sys.stderr)
        self.exit(EXIT_INVALID, f"tfgen: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tfgen", description="Generate TensorFlow custom training loops from YAML specs.")
    parser.add_argument("--version", action="version", version=f"tfgen {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, help_text in (
        ("build", "write the generated script of each spec"),
        ("check", "exit 1 if any generated file is missing, stale or hand-edited"),
        ("diff", "show the changes build would make; exit 1 if any"),
    ):
        command = commands.add_parser(name, help=help_text)
        command.add_argument("specs", nargs="+", type=Path, metavar="SPEC")
        command.add_argument("--out", type=Path, default=Path("generated"), help="output folder (default: generated/)")
        command.add_argument(
            "--vendor", action="store_true", help="also write the runtime beside the scripts, which then import it"
        )
        _add_set(command)
    validate = commands.add_parser("validate", help="check specs without writing anything")
    validate.add_argument("specs", nargs="+", type=Path, metavar="SPEC")
    _add_set(validate)
    # --deep (tfgen/check/deep.py): imports Keras, builds every object and the model; never trains.
    validate.add_argument(
        "--deep",
        action="store_true",
        help="also build every Keras object and the model with Keras (seconds; never trains)",
    )
    validate.add_argument("--summary", action="store_true", help="print each model's layer table (implies --deep)")
    _add_trust(
        validate, "--deep imports the `python` data sources and the `model.builder` a spec names, and calls the builder"
    )
    init = commands.add_parser("init", help="write a commented starter spec that validates and builds")
    init.add_argument("name", nargs="?", default="starter", help="the run's name (default: starter)")
    init.add_argument("--dir", type=Path, default=Path("specs"), help="where to write NAME.yaml (default: specs/)")
    commands.add_parser("schema", help="print the JSON Schema of the spec")
    # smoke: run each spec's script briefly (tfgen/check/smoke.py)
    smoke = commands.add_parser("smoke", help="run each script a few steps on synthetic data (CPU), save, resume")
    smoke.add_argument("specs", nargs="+", type=Path, metavar="SPEC")
    smoke.add_argument("--steps", type=_positive(int), default=2, help="training steps per epoch (default 2)")
    smoke.add_argument(
        "--timeout",
        type=_positive(float),
        default=300.0,
        help="seconds per spec, both runs; a script still running is killed (default 300)",
    )
    smoke.add_argument("--jobs", type=_positive(int), default=2, help="specs run at once (default 2)")
    smoke.add_argument(
        "--real-data",
        type=_positive(int),
        metavar="N",
        help="run on the first N examples of the spec's real data instead of synthetic data "
        "(checks the loader and the files too; the data must be there)",
    )
    _add_trust(
        smoke,
        "the scripts import and call the `python` data sources and the `model.builder` a spec "
        "names (smoke passes --trust on to them)",
    )
    _add_set(smoke)
    lint = commands.add_parser(
        "lint",
        help="find known pitfalls in hand-written TensorFlow training loops",
        description="Find known pitfalls in hand-written TensorFlow training loops, from the source alone "
        "(nothing is imported or run). Exit 0 clean, 1 findings, 2 errors.",
    )
    lint.add_argument("paths", nargs="+", metavar="PATH", help="Python files or directories (recursing into *.py)")
    lint.add_argument(
        "--select",
        action="append",
        default=[],
        metavar="CODES",
        help="report only these rule codes (comma-separated, repeatable)",
    )
    lint.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="CODES",
        help="do not report these rule codes (comma-separated, repeatable)",
    )
    lint.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="output format")
    lint.add_argument("--statistics", action="store_true", help="also print the number of findings per code")
    _add_cluster_commands(commands)
    _add_report(commands)
    _add_predict(commands)
    return parser


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0:  # also NaN
            raise argparse.ArgumentTypeError(f"expected a positive {kind.__name__}, got {text!r}")
        return value

    return parse


def _add_report(commands) -> None:
    """`report` (tfgen/report.py): report.html of run folders (drawn by the runtime)."""
    from tfgen.report import add_parser

    add_parser(commands)


def _add_predict(commands) -> None:
    """`predict` and `evaluate` (tfgen/predict.py): a run's final model on new data, through its script."""
    from tfgen.predict import add_parsers

    add_parsers(commands)


def _add_cluster_commands(commands) -> None:
    """`launch`, `tf-config` (tfgen/cluster/launch.py) and `manifest` (tfgen/cluster/manifest.py): beyond one machine."""
    from tfgen.cluster import launch, manifest

    launch.add_parsers(commands)
    manifest.add_parser(commands)
    from tfgen.sweep.command import add_parser as add_sweep

    add_sweep(commands)


def _add_trust(command: argparse.ArgumentParser, who: str) -> None:
    command.add_argument(
        "--trust",
        action="store_true",
        help=f"{who}: by default only what each place takes: a builder, a data source or a loss function of a "
        "module of this project (files under the working directory or the spec's folder, not in site-packages) "
        "or a known data loader (sklearn.datasets:load_*/make_*, tfgen.datasets:*, keras.datasets.*:load_data); "
        "a layer, loss, metric, ... that is that kind of Keras class (from the project, keras or tensorflow); "
        "--trust allows any module and function, but a Keras place still takes only its kind of class "
        "(plain validate, build, check, diff and lint never import them)",
    )


def _add_set(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a spec field, e.g. --set optimizer.learning_rate=0.01 (repeatable)",
    )


def main(argv: list[str] | None = None) -> int:
    with reader_may_leave():  # `tfgen build | head -1`: the verdict, never an error (tfgen/stdout.py)
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except SpecError as error:
        print(error, file=sys.stderr)
        return EXIT_INVALID
    except UsageError as error:
        print(f"tfgen: error: {error}", file=sys.stderr)
        return EXIT_INVALID
    except OSError as error:  # a last resort: a file tfgen could not use, in one line
        where = f"{error.filename}: " if error.filename else ""
        print(f"tfgen: error: {where}{error.strerror or error}", file=sys.stderr)
        return EXIT_INVALID


def _run(args: argparse.Namespace) -> int:
    return _COMMANDS[args.command](args)


def _lint(args: argparse.Namespace) -> int:
    from tfgen.lint import run as run_lint

    return run_lint(args)


def _smoke(args: argparse.Namespace) -> int:
    from tfgen.check.smoke import run as run_smoke

    return run_smoke(args)


def _schema(args: argparse.Namespace) -> int:
    from tfgen.spec.schema import schema_text

    sys.stdout.write(schema_text())
    return EXIT_OK


def _init(args: argparse.Namespace) -> int:
    from tfgen.generate.init import write_starter

    print(f"wrote {write_starter(args.name, args.dir)}")
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    from tfgen.spec.load import Issues, load_spec

    issues = Issues()
    deep = args.deep or args.summary
    for path in args.specs:
        loaded = issues.attempt(load_spec, path, args.overrides)
        if loaded and deep:
            issues.attempt(_deep, loaded, path, args.summary, args.trust)
    issues.raise_any()
    print(f"{len(args.specs)} spec(s) valid" + (" (--deep: built with Keras)" if deep else ""))
    return EXIT_OK


def _targets(args: argparse.Namespace):
    """The files `build`, `check` and `diff` compare or write, rendered from every spec."""
    from tfgen.generate.build import plan_targets

    return plan_targets(args.specs, args.out, args.overrides, vendor=args.vendor)


def _build(args: argparse.Namespace) -> int:
    from tfgen.generate.build import OutputError, write_files
    from tfgen.paths import display_path

    targets = _targets(args)
    try:
        write_files([(target.output, target.text) for target in targets])  # all files or none
    except OutputError as error:
        raise OutputError(f"{error}; no file was changed") from None
    for target in targets:
        print(f"wrote {display_path(target.output)}")
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from tfgen.generate.build import problem
    from tfgen.paths import display_path

    targets = _targets(args)
    problems = [(t, problem(t)) for t in targets]
    bad = [(t, p) for t, p in problems if p]
    for target, why in bad:
        specs = [target.spec] if target.spec else args.specs
        command = " ".join(["tfgen build", *(["--vendor"] if args.vendor else []), *map(display_path, specs)])
        print(f"{display_path(target.output)}: {why}; run `{command}`", file=sys.stderr)
    if not bad:
        print(f"{len(targets)} generated file(s) up to date")
    return EXIT_DIFFERENT if bad else EXIT_OK


def _diff(args: argparse.Namespace) -> int:
    from tfgen.generate.build import unified_diff

    diffs = [unified_diff(t) for t in _targets(args)]
    sys.stdout.write("".join(diffs))
    return EXIT_DIFFERENT if any(diffs) else EXIT_OK


def _deep(loaded, path: Path, summary: bool, trust: bool) -> None:
    """`validate --deep`: build the spec's Keras objects and model (imports Keras only here)."""
    from tfgen.check.deep import deep_validate

    _, doc, spec = loaded
    result = deep_validate(doc, spec, path.parent, trust)
    if summary:
        print(f"{doc.path}: model `{spec.name}`\n{result.summary}", end="")


def _sweep(args: argparse.Namespace) -> int:
    from tfgen.sweep.command import run as run_sweep

    return run_sweep(args)


def _run_cluster_command(args: argparse.Namespace) -> int:
    from tfgen.cluster import launch

    if args.command == "launch":
        return launch.run(args)
    if args.command == "tf-config":
        return launch.run_tf_config(args)
    from tfgen.cluster.manifest import run as run_manifest

    return run_manifest(args)


def _report(args: argparse.Namespace) -> int:
    from tfgen.report import run as run_report

    return run_report(args)


def _predict(args: argparse.Namespace) -> int:
    from tfgen.predict import run as run_predict

    return run_predict(args)


_COMMANDS = {
    "build": _build,
    "check": _check,
    "diff": _diff,
    "validate": _validate,
    "init": _init,
    "schema": _schema,
    "smoke": _smoke,
    "lint": _lint,
    "launch": _run_cluster_command,
    "tf-config": _run_cluster_command,
    "manifest": _run_cluster_command,
    "sweep": _sweep,
    "report": _report,
    "predict": _predict,
    "evaluate": _predict,
}


if __name__ == "__main__":
    sys.exit(main())

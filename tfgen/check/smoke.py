"""`tfgen smoke`: build each spec into a temporary folder and run its script on the CPU for a few
steps on synthetic data (or the first N real examples: `--real-data N`), through one checkpoint
save and one resume; PASS or FAIL per spec.

Nothing outside the temporary folder is written: the scripts run in the working directory (so
user modules and relative paths behave as in a real run) with `--output-dir` in the temporary
folder, and a `cache` file path is moved there too. Each spec has a time limit; a script that
outlives it is killed with its whole process group.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tfgen.check.deep_sources import missing_extras
from tfgen.generate.build import plan_targets, write_files
from tfgen.processes import kill_group
from tfgen.spec.load import Issues, load_spec
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec
from tfgen.spec.names import has_test

EXIT_OK, EXIT_FAILED = 0, 1
# The generated function a traceback passes through last -> the spec field that decides it.
FIELD_OF_FUNCTION = {
    "load_data": ("data",),
    "build_preprocessing": ("data", "train", "preprocess"),
    "build_augmentation": ("data", "train", "augment"),
    "build_optimizer": ("optimizer",),
    "build_metrics": ("metrics",),
}
# Both runs of a script in one Python process (TensorFlow imported once: a third less CPU). The
# second `main()` builds the model, optimizer and checkpoint anew and restores from the run
# folder, as a rerun does; what the first run left is recorded in between.
CHILD = """
import importlib.util, json, pathlib, sys
script, run_dir, steps, record, data, stand_in, *trust = sys.argv[1:]  # trust: [] or ["--trust"]
sys.argv = [script]
sys.path[0] = str(pathlib.Path(script).resolve().parent)  # as `python script.py` has it, not ''
spec = importlib.util.spec_from_file_location("tfgen_smoked_script", script)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
if stand_in:  # a distillation's teacher still to be trained: the student, saved as first built, teaches
    build_model = module.build_model
    def build_and_keep(*sizes):
        model = build_model(*sizes)
        if not pathlib.Path(stand_in).exists():
            model.save(stand_in)
        return model
    module.build_model = build_and_keep
options = [data, "--steps-per-epoch", steps, "--output-dir", run_dir, *trust]
module.rt.run(lambda: module.main(["--epochs", "1", *options]))
run = pathlib.Path(run_dir)
history = run / "history.jsonl"
rows = [json.loads(line) for line in history.read_text().splitlines()] if history.exists() else []
saved = sorted(path.name for path in (run / "checkpoints").glob("ckpt-*.index"))
pathlib.Path(record).write_text(json.dumps({"history": rows, "checkpoints": saved}))
print("tfgen-smoke: resuming", flush=True)
module.rt.run(lambda: module.main(["--epochs", "2", *options]))
"""
MARK = "tfgen-smoke: resuming"
RESUMED = re.compile(r"^Resuming from (?P<path>\S+) \(epoch 2, step 0\)$", re.MULTILINE)
FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line \d+, in (?P<function>\S+)$')
# Stop `tfgen smoke` as Ctrl-C does: a cancelled CI job (SIGTERM), a dropped session (SIGHUP).
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class Stopped(Exception):
    """A stop signal to `tfgen smoke`, raised in the main thread as Ctrl-C raises KeyboardInterrupt."""

    def __init__(self, number: int):
        super().__init__(signal.Signals(number).name)
        self.number = number


def raise_stopped(number: int, frame) -> None:
    for other in STOP_SIGNALS:  # the stop is under way: a second signal must not interrupt it
        signal.signal(other, signal.SIG_IGN)
    raise Stopped(number)


@dataclass
class Smoke:
    """One spec to smoke-test: its resolved document, its script and run folder."""

    shown: str
    doc: Located
    spec: Spec
    script: Path
    run_dir: Path
    stand_in: Path | None = None  # where the script's stand-in teacher is saved (None: the spec's own)

    @property
    def record(self) -> Path:
        """What the first run left (history rows, checkpoints), written between the two runs."""
        return self.run_dir.parent / "first_run.json"


@dataclass
class Outcome:
    passed: bool
    message: str  # PASS: what was checked; FAIL: the first error line (located where it can be)


def prepare(specs: list[Path], overrides: list[str], folder: Path) -> list[Smoke]:
    """Validate every spec (SpecError with the problems of all invalid ones), then build each into
    its own subfolder of `folder` (so specs of the same name do not collide)."""
    issues = Issues()
    valid = [
        (path, loaded)
        for path in dict.fromkeys(specs)  # a spec given twice runs once
        if (loaded := issues.attempt(load_spec, path, overrides))
    ]
    for _, loaded in valid:  # synthetic runs need no data, but the spec's real runs need the extra
        issues.found += missing_extras(loaded.doc, loaded.spec)
    issues.raise_any()
    smokes = []
    for number, (spec_path, loaded) in enumerate(valid):
        home = folder / str(number)
        moved = [  # a cache file lands in the temporary folder, not beside the user's files
            f"data.{part}.cache={home / f'{part}.cache'}"
            for part in ("train", "validation")
            if isinstance(getattr(getattr(loaded.spec.data, part), "cache", None), str)
        ]
        stand_in = stand_in_teacher(loaded.spec, home)
        if stand_in:
            moved.append(f"algorithm.teacher={stand_in}")
        script = load_spec(spec_path, [*overrides, *moved]) if moved else loaded
        targets = plan_targets([spec_path], home / "generated", loaded={spec_path: script})
        write_files([(target.output, target.text) for target in targets])
        smokes.append(Smoke(*loaded, targets[0].output, home / "run", stand_in))
    return smokes


def stand_in_teacher(spec: Spec, home: Path) -> Path | None:
    """Where a distillation spec's stand-in teacher goes when its own does not exist yet (trained
    by another spec's run): the student's untrained copy, saved there by the script's process."""
    teacher = getattr(spec.algorithm, "teacher", None)
    return home / "stand_in_teacher.keras" if teacher and not Path(teacher).is_file() else None


class Runner:
    """Runs scripts as process groups (so a timed-out one is killed whole, children included)."""

    def __init__(self, steps: int, timeout: float, real_data: int | None = None, trust: bool = False):
        self.steps, self.timeout = steps, timeout
        # Synthetic data of the declared shapes, or the first N examples of the real data.
        self.data = "--synthetic" if real_data is None else f"--max-examples={real_data}"
        self.trust = ["--trust"] if trust else []  # passed on to the scripts: import any module
        self.running: set[subprocess.Popen] = set()
        self.lock = threading.Lock()
        self.stopped = False  # after Ctrl-C: start nothing more
        # The CPU, whatever is visible; one local worker, whatever cluster TF_CONFIG describes.
        self.env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"} | {"CUDA_VISIBLE_DEVICES": "-1"}
        self.env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

    def env_for(self, spec: Spec) -> dict[str, str]:
        """The script's environment. A `mixed_float16` spec runs without oneDNN (unless the
        environment says otherwise): on a CPU with AVX-512 FP16 its float16 kernels ran a short
        `cifar` run ~10x slower (292 s against 29 s), past the time limit; elsewhere TensorFlow's
        own kernels run float16 anyway. What smoke checks is the loop, not those kernels."""
        if spec.precision == "mixed_float16":
            return {"TF_ENABLE_ONEDNN_OPTS": "0"} | self.env
        return self.env

    def script(self, smoke: Smoke) -> subprocess.CompletedProcess:
        """Run the script's two runs (see CHILD); return code None: killed at the time limit."""
        arguments = (smoke.script, smoke.run_dir, self.steps, smoke.record, self.data, smoke.stand_in or "")
        command = [sys.executable, "-c", CHILD, *map(str, arguments), *self.trust]
        with self.lock:
            if self.stopped:
                return subprocess.CompletedProcess(command, None, "", "")
            process = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=self.env_for(smoke.spec),
                start_new_session=True,
            )
            self.running.add(process)
        try:
            out, err = process.communicate(timeout=self.timeout)
            return subprocess.CompletedProcess(command, process.returncode, out, err)
        except subprocess.TimeoutExpired:
            out, err = self.kill(process)
            return subprocess.CompletedProcess(command, None, out or "", err or "")
        finally:
            with self.lock:
                self.running.discard(process)

    @staticmethod
    def kill(process: subprocess.Popen) -> tuple[str | None, str | None]:
        """Kill the process group of `process`; its output so far."""
        kill_group(process, signal.SIGKILL)
        return process.communicate()

    def kill_all(self) -> None:
        """Ctrl-C: kill every running script (their threads reap them) and start no more."""
        with self.lock:
            self.stopped, running = True, list(self.running)
        for process in running:
            kill_group(process, signal.SIGKILL)

    def smoke(self, smoke: Smoke) -> Outcome:
        """Train one epoch (a checkpoint is saved), then run again to epoch 2: it must resume."""
        started = time.monotonic()
        result = self.script(smoke)
        if result.returncode is None:
            return Outcome(False, f"{smoke.shown}: timed out after {self.timeout:g} s ({which_run(result)}; killed)")
        outcome = judge(smoke, result, f"{time.monotonic() - started:.1f} s")
        if outcome.passed and smoke.stand_in:
            teacher = smoke.spec.algorithm.teacher
            outcome.message = f"{outcome.message[:-1]}; a stand-in teacher: {teacher} does not exist yet)"
        return outcome


def judge(smoke: Smoke, result: subprocess.CompletedProcess, seconds: str) -> Outcome:
    """PASS when both runs exited 0, the first left one history row and a checkpoint, and the
    second resumed from that checkpoint at epoch 2 and kept the first run's row."""
    if result.returncode != 0:
        return Outcome(False, f"{first_error(smoke, result)} ({which_run(result)})")
    try:
        first = json.loads(smoke.record.read_text())
    except (OSError, ValueError):  # the process ended before the second run
        first = {"history": [], "checkpoints": []}
    if [row.get("epoch") for row in first["history"]] != [1] or not first["checkpoints"]:
        found = f"{len(first['history'])} history row(s), {len(first['checkpoints'])} checkpoint(s)"
        return Outcome(False, f"{smoke.shown}: the first run did not end with one epoch and a checkpoint ({found})")
    if smoke.spec.checkpoint.resume != "auto":
        resume = smoke.spec.checkpoint.resume
        return Outcome(True, f"{smoke.shown} (saved at epoch 1; checkpoint.resume: {resume}: no resume; {seconds})")
    rows = history(smoke.run_dir)
    resumed = RESUMED.search(result.stdout.split(MARK, 1)[1])
    from_first = resumed is not None and f"{Path(resumed['path']).name}.index" in first["checkpoints"]
    if not from_first or [row.get("epoch") for row in rows] != [1, 2] or rows[0] != first["history"][0]:
        epochs = [row.get("epoch") for row in rows]
        return Outcome(
            False, f"{smoke.shown}: the second run did not resume from the first's checkpoint (history epochs {epochs})"
        )
    if has_test(smoke.spec):
        if not (smoke.run_dir / "test.json").is_file() or "\nTest: " not in result.stdout.split(MARK, 1)[1]:
            return Outcome(False, f"{smoke.shown}: the resumed run did not evaluate the test data (no test.json)")
        return Outcome(True, f"{smoke.shown} (saved at epoch 1, resumed to epoch 2, tested; {seconds})")
    return Outcome(True, f"{smoke.shown} (saved at epoch 1, resumed to epoch 2; {seconds})")


def which_run(result: subprocess.CompletedProcess) -> str:
    """The run a failure happened in: the resumed one once the first printed MARK."""
    return "resumed run" if MARK in result.stdout else "first run"


def history(run_dir: Path) -> list[dict]:
    path = run_dir / "history.jsonl"
    try:
        return [json.loads(line) for line in path.read_text().splitlines()]
    except (OSError, ValueError):
        return []


def first_error(smoke: Smoke, result: subprocess.CompletedProcess) -> str:
    """The script's one-line error as is; else a traceback's exception line, located in the spec
    by the last generated function it passed through, where that maps to a spec field."""
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    ours = [line for line in lines if line.startswith("error: ")]
    if ours:
        return f"{smoke.shown}: {ours[-1]}"
    if not lines:
        return f"{smoke.shown}: exit code {result.returncode}, nothing on stderr"
    if tracebacks := [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]:
        lines = lines[tracebacks[-1] :]  # the last of chained exceptions
    functions = [m["function"] for line in lines if (m := FRAME.match(line)) and Path(m["file"]) == smoke.script]
    # The exception's first line: the first unindented line after the frames (TF adds graph lines).
    message = next((line for line in lines[1:] if not line[:1].isspace()), lines[-1]).strip()
    if not functions:
        return f"{smoke.shown}: {message}"
    field = FIELD_OF_FUNCTION.get(functions[-1])
    if functions[-1] == "build_model":
        field = ("model", "builder") if smoke.spec.model.builder else ("model",)
    if field is None:
        return f"{smoke.shown}: {message} (in the script's {functions[-1]})"
    return str(smoke.doc.issue(field, message))


def run(args) -> int:
    """`tfgen smoke SPEC...`: print PASS or FAIL per spec; 0 all passed, 1 some failed; after Ctrl-C
    or a stop signal N: the scripts' process groups killed, the temporary folder removed, 128 + N."""
    previous = {number: signal.signal(number, raise_stopped) for number in STOP_SIGNALS}
    try:
        return run_specs(args)
    except KeyboardInterrupt:
        print("smoke: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
    except Stopped as stopped:
        print(f"smoke: stopped by {stopped}", file=sys.stderr)
        return 128 + stopped.number
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def run_specs(args) -> int:
    """The smoke tests of `run`; KeyboardInterrupt or Stopped once what runs is killed."""
    started = time.monotonic()
    runner = Runner(args.steps, args.timeout, args.real_data, args.trust)
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="tfgen-smoke-") as folder:
        smokes = prepare(args.specs, args.overrides, Path(folder))
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            try:
                for outcome in pool.map(runner.smoke, smokes):  # in spec order, as they finish
                    print(f"{'PASS' if outcome.passed else 'FAIL'} {outcome.message}", flush=True)
                    outcomes.append(outcome)
            except (KeyboardInterrupt, Stopped):  # stop what runs, start nothing more; then the folder goes
                pool.shutdown(wait=False, cancel_futures=True)
                runner.kill_all()
                raise
    failed = sum(not outcome.passed for outcome in outcomes)
    summary = f"{len(outcomes) - failed} passed, {failed} failed in {time.monotonic() - started:.0f} s"
    print(f"smoke: {summary}", file=sys.stderr if failed else sys.stdout)
    return EXIT_FAILED if failed else EXIT_OK

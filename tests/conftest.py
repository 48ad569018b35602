"""Shared helpers: the repo layout, running tfgen, and loading generated scripts as modules."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest
import yaml
import zygote

from tfgen.cluster.launch import free_ports, tf_config

ROOT = Path(__file__).resolve().parent.parent
SPECS = sorted((ROOT / "specs").glob("*.yaml"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Every process the tests start sees the training install, without IPython and matplotlib
# (see tests/train_env/sitecustomize.py); without_train_env() gives them back to a process.
TRAIN_ENV = ROOT / "tests" / "train_env"
if str(TRAIN_ENV) not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TRAIN_ENV), os.environ.get("PYTHONPATH")]))


@pytest.fixture(scope="session", autouse=True)
def warm_interpreters():
    """The test process's `python script.py` and `python -c` commands forked by zygotes that
    have imported the training stack (tests/zygote.py: which commands, and why)."""
    zygote.install()
    yield
    zygote.uninstall()


def without_train_env(environ) -> dict:
    """A copy of `environ` without tests/train_env on its PYTHONPATH (IPython and matplotlib import).

    PYTHONPATH stays a key (empty when train_env was all of it), so that a helper which lays this
    over os.environ (run_tfgen) does not bring train_env back: as in CI, where it is all of it."""
    env = dict(environ)
    path = [part for part in env.pop("PYTHONPATH", "").split(os.pathsep) if part and part != str(TRAIN_ENV)]
    env["PYTHONPATH"] = os.pathsep.join(path)
    return env


def run_tfgen(
    *args: str, cwd: Path = ROOT, env: dict | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    """Run the real `tfgen` command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "tfgen", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


def tfgen_here(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """`tfgen ARGS` run by `tfgen.cli.main` in this process: its exit code and output, as run_tfgen
    gives them, without starting an interpreter (a second or more each).

    For what tfgen decides and prints: build, check, diff, validate without --deep, lint,
    manifest. What only a real process shows (no traceback reaches stderr, signals, imports of
    spec code, what a fresh interpreter imports) is run_tfgen's.
    """
    from tfgen.cli import main

    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit_:  # argparse's usage errors
                code = exit_.code
    finally:
        os.chdir(previous)
    return subprocess.CompletedProcess(["tfgen", *args], code, out.getvalue(), err.getvalue())


def load_module(path: Path):
    """Import a generated script as a module (a fresh one per call)."""
    name = f"generated_{path.stem}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_runtime(folder: Path = ROOT / "runtime" / "tfgen_runtime"):
    """Import the support package in `folder` (a fresh copy per call, under a name of its own, so
    that it is not the `tfgen_runtime` a script imports)."""
    name = f"tfgen_runtime_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its modules import each other relatively
    spec.loader.exec_module(module)
    return module


class Lazy:
    """A module loaded when a test first uses one of its names, not when pytest collects the file
    that holds it: a pytest-xdist worker that runs none of that file's tests never imports
    TensorFlow (about 10 s of CPU)."""

    def __init__(self, load):
        self._load = load
        self._module = None

    def __getattr__(self, name: str):
        if name.startswith(("_", "pytest")):  # pytest's probes of what a test file holds
            raise AttributeError(name)
        if self._module is None:
            self._module = self._load()
        return getattr(self._module, name)


def lazy_import(name: str) -> Lazy:
    """`import name`, done at the first use of one of its names (see Lazy)."""
    return Lazy(lambda: importlib.import_module(name))


def base_spec(**overrides) -> dict:
    """A small valid spec (synthetic data, one Dense head), with top-level sections overridden."""
    spec = {
        "name": "small",
        "seed": 1,
        "data": {
            "train": {"source": {"type": "synthetic", "examples": 256}, "batch_size": 32, "shuffle": 256},
            "validation": {"source": {"type": "synthetic", "examples": 64}},
        },
        "model": {
            "inputs": {"features": {"shape": [8]}},
            "layers": [{"type": "Dense", "units": 16, "activation": "relu"}],
            "outputs": {"label": [{"type": "Dense", "units": 3}]},
        },
        "targets": {"label": {"shape": [], "dtype": "int32", "classes": 3}},
        "losses": {"label": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        "metrics": {"label": ["SparseCategoricalAccuracy"]},
        "optimizer": {"type": "Adam", "learning_rate": 0.01},
        "train": {"epochs": 2},
        # No report.html: drawing it takes about 3 s of CPU (matplotlib's import and six PNGs),
        # more than the whole run of a small spec, and the test processes cannot import
        # matplotlib (tests/train_env); tests/runtime/test_run_report.py draws it.
        "logging": {"report": False},
    }
    spec.update(overrides)
    return spec


def build(folder: Path, spec: dict, stem: str = "small") -> Path:
    """Write a spec dict to folder/<stem>.yaml, build it with the CLI's main (`tfgen build`, in
    this process: the build itself is what tests/generate tests in real processes), and return the
    script's path."""
    folder.mkdir(parents=True, exist_ok=True)
    spec_path = folder / f"{stem}.yaml"
    spec_path.write_text(yaml.safe_dump(spec, sort_keys=False))
    result = tfgen_here("build", str(spec_path), "--out", str(folder / "generated"), cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder / "generated" / f"{stem}.py"


@pytest.fixture
def build_spec(tmp_path):
    """`build` into tmp_path: build_spec(spec, stem="small") -> the script's path."""
    return lambda spec, stem="small": build(tmp_path, spec, stem)


class FinishedRuns:
    """Each distinct spec (and command line) built and trained once, in a real process, the first
    time a test asks for it; tests copy the finished run folder (`copy_run`) before they change it.

    Many tests need a finished run only to resume, corrupt or refuse it: they share one instead
    of each training the same small spec again (once per pytest-xdist worker).
    """

    def __init__(self, folder: Path):
        self.folder = folder
        self.runs: dict[str, tuple[Path, Path]] = {}

    def __call__(self, spec: dict, *args: str) -> tuple[Path, Path]:
        """The script built from `spec` and the folder of its finished run (`args` added to its
        command line): never change the folder, change a copy."""
        key = json.dumps([spec, args], sort_keys=True)
        if key not in self.runs:
            home = self.folder / f"spec{len(self.runs)}"
            script = build(home, spec)
            out = home / "run"
            command = [sys.executable, str(script), "--output-dir", str(out), *args]
            env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
            result = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, check=False)
            assert result.returncode == 0, result.stderr[-2000:]
            self.runs[key] = (script, out)
        return self.runs[key]


@pytest.fixture(scope="session")
def finished_runs(tmp_path_factory) -> FinishedRuns:
    """finished_runs(spec, *args) -> (script, finished run folder), trained once a session."""
    return FinishedRuns(tmp_path_factory.mktemp("finished"))


def copy_run(finished: Path, folder: Path) -> Path:
    """A copy of the run folder `finished` at `folder` (files, modes and the lock file)."""
    shutil.copytree(finished, folder, symlinks=True)
    return folder


@contextlib.contextmanager
def local_workers(command, n: int = 2, env=None, **popen):
    """`n` processes, `command(index)` each, as the workers of one localhost cluster (TF_CONFIG set);
    `env` (a dict, or a function of the index) is added to os.environ. Every worker is killed on exit."""
    hosts = [f"127.0.0.1:{port}" for port in free_ports(n)]
    workers = []
    try:
        for index in range(n):
            extra = env(index) if callable(env) else env or {}
            environ = {**os.environ, **extra, "TF_CONFIG": tf_config(hosts, index)}
            workers.append(subprocess.Popen(command(index), env=environ, **popen))
        yield workers
    finally:
        for worker in workers:
            worker.kill()


def write_module(folder: Path, name: str, body: str) -> None:
    """folder/<name>.py holding `body` (folder created if needed)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(body)


def import_blocker(folder: Path, modules=("tensorflow", "keras")) -> dict:
    """The environment of a Python in which `modules` cannot be imported (a sitecustomize.py)."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name.split('.')[0] in {tuple(modules)!r}:\n"
        "            raise ImportError(f'{name} is blocked in this test')\n"
        "sys.meta_path.insert(0, Block())\n"
    )
    return {"PYTHONPATH": str(folder)}


def made_once(tmp_path_factory, name: str, make) -> Path:
    """The folder `make(folder)` fills, made once a test run: the first pytest-xdist worker that
    asks makes it (under a lock), the others wait for it and share it. Never change it."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the workers' common folder
    folder = root / name
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".made").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (folder / ".made").write_text("")
    return folder


# What a generator-only install lacks: the training stack.
TRAINING_STACK_MODULES = ("tensorflow", "keras", "numpy", "tensorboard", "sklearn")
BLOCKED_BUILD_HASH_SEED = "12345"


def _build_blocked(folder: Path) -> None:
    """`tfgen build specs/*.yaml` in a copy of the repository's layout (scripts find user modules
    at ../specs), in a process where the training stack cannot be imported, with a hash seed other
    than this process's; its exit code and output in result.json."""
    project = folder / "project"
    shutil.copytree(ROOT / "specs", project / "specs")
    (project / "pyproject.toml").write_text("")  # stop config discovery above the copy
    env = {**_blocked_env(folder), "PYTHONHASHSEED": BLOCKED_BUILD_HASH_SEED}
    result = run_tfgen("build", *[f"specs/{spec.name}" for spec in SPECS], cwd=project, env=env)
    (folder / "result.json").write_text(json.dumps([result.returncode, result.stdout, result.stderr]))


def _blocked_env(folder: Path) -> dict:
    """The blocker of the training stack in folder/blocker, and this checkout's tfgen (the
    project copy is elsewhere: `python -m tfgen` there would find another install's)."""
    blocker = folder / "blocker"
    if not blocker.exists():
        import_blocker(blocker, (*TRAINING_STACK_MODULES, "tfgen_runtime"))  # build needs no runtime
    return {"PYTHONPATH": os.pathsep.join([str(blocker), str(ROOT)])}


@pytest.fixture(scope="session")
def blocked_build(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path, dict]:
    """(the result, the project folder, the environment) of `tfgen build specs/*.yaml` run once
    in a process without the training stack (see _build_blocked): its files are in
    project/generated/. Shared by every test that builds the example specs in such a process."""
    folder = made_once(tmp_path_factory, "blocked_build", _build_blocked)
    code, stdout, stderr = json.loads((folder / "result.json").read_text())
    result = subprocess.CompletedProcess(["tfgen", "build"], code, stdout, stderr)
    return result, folder / "project", _blocked_env(folder)


def snapshot(folder: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every file and folder under `folder` with its bytes and mode (to show nothing changed),
    but the lock file, which names the process that last held the folder."""
    return {
        str(p.relative_to(folder)): (None if p.is_dir() else p.read_bytes(), p.stat().st_mode)
        for p in sorted(folder.rglob("*"))
        if p.name != ".tfgen.lock"
    }


def read_history(output_dir: Path) -> list[dict]:
    import json

    return [json.loads(line) for line in (output_dir / "history.jsonl").read_text().splitlines()]


def cuda_driver_loads() -> bool:
    """Whether the CUDA driver library loads here: TensorFlow sees no GPU where it does not."""
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.hookimpl(trylast=True)  # after `-m` has deselected what it deselects
def pytest_collection_modifyitems(config, items):
    """`gpu` tests skip, saying so, where no GPU is visible (this project's machines have none).

    Without a CUDA driver no GPU is visible; with one, a TensorFlow process says how many there
    are (an import of TensorFlow: about 10 s of CPU in every pytest-xdist worker)."""
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    if not cuda_driver_loads():
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason="no GPU visible"))
        return
    probe = subprocess.run(
        [sys.executable, "-c", "import tensorflow as tf; print(len(tf.config.list_physical_devices('GPU')))"],
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )
    if probe.stdout.strip() in ("", "0"):
        for item in gpu_items:
            item.add_marker(pytest.mark.skip(reason="no GPU visible"))


HARNESS = ROOT / "tests" / "e2e" / "harness.py"


def unreadable_weights_files(folder: Path) -> dict[str, str]:
    """Three weights files Keras cannot load, written in `folder`: each name with the reason the
    one-line error gives for it."""
    (folder / "garbage.keras").write_text("not a zip archive")
    (folder / "garbage.weights.h5").write_text("not an HDF5 file")
    with zipfile.ZipFile(folder / "weightless.keras", "w") as archive:
        archive.writestr("metadata.json", json.dumps({"keras_version": "3.15.0"}))
        archive.writestr("config.json", "{}")
    return {
        "garbage.keras": "garbage.keras is not a .keras file (not a zip archive): save it with model.save",
        "weightless.keras": "weightless.keras holds no weights (There is no item named 'model.weights.h5' in the "
        "archive)",
        "garbage.weights.h5": "garbage.weights.h5 cannot be read as a .weights.h5 file (Unable to synchronously open "
        "file (file signature not found))",
    }


def assert_one_line_error(result, *phrases):
    """A script's run failed (exit 1) with exactly one `error: ` line holding every phrase, and no
    traceback; the line."""
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr[-2000:]
    for phrase in phrases:
        assert phrase in errors[0], errors[0]
    return errors[0]


def replica_independent_spec(**overrides):
    """Deterministic and replica-independent: no shuffle, no dropout, plain SGD."""
    spec = base_spec(**{"optimizer": {"type": "SGD", "learning_rate": 0.1}, **overrides})
    spec["data"]["train"].pop("shuffle", None)
    return spec


def run_harness(script, tmp_path, tag, *args, cpus=1, env=None, timeout=300, record_saves=False):
    """Run a generated script through tests/e2e/harness.py on `cpus` logical CPUs: its initial and
    final weights, history rows and stdout (`record_saves`: and the weights at each checkpoint
    it saves, which saved_weights reads)."""
    weights, history, initial = (tmp_path / f"{tag}.npz", tmp_path / f"{tag}.json", tmp_path / f"{tag}-init.npz")
    saves = ["--saved-weights", str(tmp_path / f"{tag}-saved")] if record_saves else []
    result = subprocess.run(
        [
            sys.executable,
            str(HARNESS),
            str(script),
            "--cpus",
            str(cpus),
            "--weights",
            str(weights),
            "--history",
            str(history),
            "--initial-weights",
            str(initial),
            *saves,
            "--",
            "--output-dir",
            str(tmp_path / tag),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return _arrays(initial), _arrays(weights), json.loads(history.read_text()), result.stdout


def saved_weights(tmp_path, tag, number):
    """The weights at the `number`th checkpoint (from 1) a run_harness(..., record_saves=True) run saved."""
    return _arrays(tmp_path / f"{tag}-saved-{number}.npz")


def _arrays(path):
    import numpy as np

    with np.load(path) as saved:
        return [array for _, array in sorted(saved.items(), key=lambda kv: int(kv[0].split("_")[1]))]

"""Benchmark tfgen's generated loops against model.fit, the naive loop and the hardware limit.

    python benchmarks/run.py            # the full run (about 25 minutes on 2 cores)
    python benchmarks/run.py --quick    # the MLP and the float32 CNN, smaller, one round: about 3 minutes
    python benchmarks/run.py --smoke    # tiny sizes, for the test suite

Every (case, system) runs in its own subprocess (clean memory numbers, no shared TF state); the
systems are interleaved round by round because this machine is shared and single runs vary.
Writes benchmarks/results/latest.json and docs/benchmarks.md (+ docs/benchmarks.png).

Systems, on the same model, data, batch size and machine:
  fit_default   Keras model.fit with defaults
  fit_tuned     model.fit with steps_per_execution and jit_compile=True
  naive         the seed articles' loop: a @tf.function step called from a Python for-loop
  tfgen         the generated loop from the spec with no performance option (defaults)
  limit         a bare XLA-compiled step over batches sliced from in-memory tensors, no metrics
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SYSTEMS = ["fit_default", "fit_tuned", "naive", "tfgen", "limit"]
# case: spec, examples, batch size, precision, epochs (full run)
CASES = {
    "mlp": {"spec": "specs/mnist.yaml", "examples": 60000, "batch": 32, "precision": "float32", "epochs": 10},
    "cnn": {"spec": "specs/cifar.yaml", "examples": 1920, "batch": 128, "precision": "float32", "epochs": 4},
    "cnn_mixed": {"spec": "specs/cifar.yaml", "examples": 1920, "batch": 128, "precision": "mixed_float16", "epochs": 4},
    "multitask": {"spec": "specs/multitask.yaml", "examples": 2048, "batch": 32, "precision": "float32", "epochs": 5},
}
MODES = {
    "full": {"cases": list(CASES), "rounds": 2, "scale": 1.0, "epochs": None},
    "quick": {"cases": ["mlp", "cnn"], "rounds": 1, "scale": 0.25, "epochs": 4},
    "smoke": {"cases": ["mlp"], "rounds": 1, "scale": 0.005, "epochs": 3},
}
TUNED_STEPS_PER_EXECUTION = 100  # what the generated loop's `auto` picks for these epoch lengths


# --- the worker: one system on one case, in this process -------------------------------------


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def benchmark_spec(case: dict, examples: int, epochs: int) -> dict:
    """The case's example spec with synthetic data, one device, and no performance option."""
    import yaml

    spec = yaml.safe_load((ROOT / case["spec"]).read_text())
    spec["name"] = "bench"
    spec["precision"] = case["precision"]
    spec.pop("strategy", None)
    spec["data"] = {"train": {"source": {"type": "synthetic", "examples": examples}, "batch_size": case["batch"],
                              "shuffle": examples}}
    spec["train"] = {"epochs": epochs}
    spec["checkpoint"] = {"every_epochs": 1000, "keep": 1}
    return spec


def build_module(spec: dict, folder: Path):
    """Generate the script with tfgen's own build path and import it."""
    import importlib.util

    import yaml

    sys.path.insert(0, str(ROOT))
    from tfgen.build import plan_targets

    path = folder / "bench.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    target, runtime = plan_targets([path], folder)
    script = folder / "bench.py"
    script.write_text(target.text)
    runtime.output.write_text(runtime.text)  # the support module beside the script
    module_spec = importlib.util.spec_from_file_location("bench_script", script)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def keras_object(config, namespace):
    if isinstance(config, str):
        return getattr(namespace, config)()
    args = {k: v for k, v in config.items() if k not in ("type", "weight")}
    return getattr(namespace, config["type"])(**args)


def run_worker(case_name: str, system: str, examples: int, epochs: int) -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    case = CASES[case_name]
    folder = Path(tempfile.mkdtemp(prefix="tfgen-bench-"))
    spec = benchmark_spec(case, examples, epochs)
    module = build_module(spec, folder)

    import keras
    import tensorflow as tf

    epoch_seconds: list[float] = []
    rss: list[float] = []

    if system == "tfgen":
        append = module.rt.History.append

        def recording(history, row):  # called once per epoch, after it
            append(history, row)
            epoch_seconds.append(row["epoch_seconds"])
            rss.append(rss_mb())

        module.rt.History.append = recording
        try:
            history = module.main(["--output-dir", str(folder / "run"), "--fresh"])
        finally:
            module.rt.History.append = append
        # The generated loop times its training phase itself (examples_per_second).
        throughput = [row["examples_per_second"] for row in history]
    else:
        if case["precision"] != "float32":
            keras.mixed_precision.set_global_policy(case["precision"])
        keras.utils.set_random_seed(module.SEED)
        (features, targets), _ = module.load_data()
        model = module.build_model()
        optimizer = module.build_optimizer()
        if case["precision"] == "mixed_float16":
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
        losses = {name: keras_object(config, keras.losses) for name, config in spec["losses"].items()}
        weights = {name: (config.get("weight", 1.0) if isinstance(config, dict) else 1.0) for name, config in spec["losses"].items()}
        batch = case["batch"]
        steps = examples // batch
        dataset = (tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(examples, seed=0)
                   .batch(batch, drop_remainder=True).prefetch(tf.data.AUTOTUNE))
        throughput = []

        if system in ("fit_default", "fit_tuned"):
            metrics = {name: [keras_object(m, keras.metrics) for m in items] for name, items in spec.get("metrics", {}).items()}
            tuned = system == "fit_tuned"
            model.compile(optimizer=optimizer, loss=losses, loss_weights=weights, metrics=metrics,
                          steps_per_execution=TUNED_STEPS_PER_EXECUTION if tuned else 1,
                          jit_compile=True if tuned else "auto")

            class Timing(keras.callbacks.Callback):
                def on_epoch_begin(self, epoch, logs=None):
                    self.started = time.perf_counter()

                def on_epoch_end(self, epoch, logs=None):
                    epoch_seconds.append(time.perf_counter() - self.started)
                    rss.append(rss_mb())

            model.fit(dataset, epochs=epochs, verbose=0, callbacks=[Timing()])
        else:
            variables = model.trainable_variables

            def loss_of(x, y, training=True):
                predictions = model(x, training=training)
                total = tf.add_n([weights[n] * losses[n](y[n], predictions[n]) for n in losses])
                return total + (tf.add_n(model.losses) if model.losses else 0.0)

            if system == "naive":
                @tf.function
                def train_step(x, y):
                    with tf.GradientTape() as tape:
                        loss = loss_of(x, y)
                        scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
                    optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables))
                    return loss

                for _ in range(epochs):
                    started = time.perf_counter()
                    for x, y in dataset:  # one Python iteration per batch
                        loss = train_step(x, y)
                    float(loss)
                    epoch_seconds.append(time.perf_counter() - started)
                    rss.append(rss_mb())
            else:  # limit
                x_all = {k: tf.convert_to_tensor(v) for k, v in features.items()}
                y_all = {k: tf.convert_to_tensor(v) for k, v in targets.items()}
                optimizer.build(variables)

                @tf.function(jit_compile=True)
                def step(x, y):
                    with tf.GradientTape() as tape:
                        loss = loss_of(x, y)
                        scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
                    optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables))

                @tf.function
                def epoch_fn(seed):
                    order = tf.random.experimental.stateless_shuffle(tf.range(examples), seed=[0, seed])
                    for i in tf.range(steps):
                        rows = order[i * batch:(i + 1) * batch]
                        step({k: tf.gather(v, rows) for k, v in x_all.items()}, {k: tf.gather(v, rows) for k, v in y_all.items()})

                for epoch in range(epochs):
                    started = time.perf_counter()
                    epoch_fn(tf.constant(epoch))
                    float(optimizer.iterations.numpy())
                    epoch_seconds.append(time.perf_counter() - started)
                    rss.append(rss_mb())
        throughput = [steps * batch / seconds for seconds in epoch_seconds]

    import resource

    steady = throughput[1:] or throughput
    steady_seconds = statistics.median(epoch_seconds[1:] or epoch_seconds)
    return {
        "case": case_name,
        "system": system,
        "examples_per_second": statistics.median(steady),
        "first_step_seconds": max(0.0, epoch_seconds[0] - steady_seconds),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_growth_mb": rss[-1] - rss[min(1, len(rss) - 1)],
        "rss_after_warmup_mb": rss[min(1, len(rss) - 1)],
        "epochs": len(epoch_seconds),
    }


# --- the driver ------------------------------------------------------------------------------


def run_one(case: str, system: str, examples: int, epochs: int, timeout: float) -> dict:
    result = subprocess.run(
        [sys.executable, __file__, "--worker", case, system, "--examples", str(examples), "--epochs", str(epochs)],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    if result.returncode != 0:
        raise RuntimeError(f"{case}/{system} failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def build_speed() -> dict:
    """`tfgen build` per spec, TensorFlow made unimportable: wall time of the command, and in-process."""
    blocker = Path(tempfile.mkdtemp(prefix="tfgen-block-"))
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass B:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('tensorflow', 'keras'):\n            raise ImportError(name)\n"
        "sys.meta_path.insert(0, B())\n")
    out = Path(tempfile.mkdtemp(prefix="tfgen-build-"))
    timings = {}
    for spec in sorted((ROOT / "specs").glob("*.yaml")):
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "tfgen", "build", str(spec.relative_to(ROOT)), "--out", str(out)],
                                cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(blocker)})
        command = time.perf_counter() - started
        if result.returncode != 0:
            raise RuntimeError(result.stderr)
        timings[spec.stem] = {"command_seconds": command}
    code = ("import time, sys; from pathlib import Path; from tfgen.build import plan_targets\n"
            "plan_targets([Path('specs/digits.yaml')], Path('/tmp'))\n"
            "for s in sys.argv[1:]:\n    t = time.perf_counter(); plan_targets([Path(s)], Path('/tmp')); print(s, time.perf_counter() - t)\n")
    result = subprocess.run([sys.executable, "-c", code, *[str(s.relative_to(ROOT)) for s in sorted((ROOT / "specs").glob("*.yaml"))]],
                            cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(blocker)})
    for line in result.stdout.splitlines():
        path, seconds = line.split()
        timings[Path(path).stem]["in_process_seconds"] = float(seconds)
    return timings


def machine() -> str:
    import multiprocessing

    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = subprocess.run([sys.executable, "-c", "import tensorflow as tf, keras; print(tf.__version__, keras.__version__)"],
                              capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}).stdout.split()
    return (f"{cpu}, {multiprocessing.cpu_count()} cores, Python {platform.python_version()}, "
            f"TensorFlow {versions[0] if versions else '?'}, Keras {versions[1] if len(versions) > 1 else '?'}")


TARGETS = [
    # (description, case, system, reference system, minimum ratio)
    ("generated (defaults) >= 3x default fit, MLP", "mlp", "tfgen", "fit_default", 3.0),
    ("generated (defaults) >= 1.0x tuned fit, every case", "*", "tfgen", "fit_tuned", 1.0),
    ("generated (defaults) >= 0.9x the limit, MLP", "mlp", "tfgen", "limit", 0.9),
    ("generated >= 1.5x the naive loop, MLP", "mlp", "tfgen", "naive", 1.5),
]


def evaluate(results: list[dict]) -> list[tuple[str, str, float, bool]]:
    table = {(r["case"], r["system"]): r for r in results}
    cases = sorted({r["case"] for r in results})
    verdicts = []
    for description, case, system, reference, minimum in TARGETS:
        for name in (cases if case == "*" else [case]):
            if (name, system) in table and (name, reference) in table:
                ratio = table[name, system]["examples_per_second"] / table[name, reference]["examples_per_second"]
                verdicts.append((description, name, ratio, ratio >= minimum))
    for r in results:
        if r["system"] == "tfgen" and r["epochs"] >= 10:
            growth = r["rss_growth_mb"] / r["rss_after_warmup_mb"]
            verdicts.append(("RSS growth < 2% over 10 epochs", r["case"], growth, growth < 0.02))
    return verdicts


def write_report(results: list[dict], verdicts, builds: dict, mode: str, seconds: float, command: str, docs: Path) -> None:
    lines = [
        "# Benchmarks", "",
        f"Measured by `{command}` ({mode} mode, {seconds / 60:.1f} minutes) on {machine()}.",
        "Each (case, system) runs in its own process; systems are interleaved round by round and the",
        "figures are medians over rounds of the per-epoch median after the first (warm-up) epoch.",
        "This machine is shared: compare ratios within one run, not absolute numbers across runs.", "",
        "## Training throughput", "",
        "| case | system | examples/s | first step (s) | peak RSS (MB) | RSS growth (MB) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r['case']} | {r['system']} | {r['examples_per_second']:,.0f} | {r['first_step_seconds']:.2f} | "
                     f"{r['peak_rss_mb']:.0f} | {r['rss_growth_mb']:+.1f} |")
    lines += ["", "![examples per second](benchmarks.png)", "", "## Targets", "", "| target | case | measured | met |", "|---|---|---:|---|"]
    for description, case, value, met in verdicts:
        shown = f"{value:.1%}" if description.startswith("RSS") else f"{value:.2f}x"
        lines.append(f"| {description} | {case} | {shown} | {'yes' if met else '**missed**'} |")
    lines += ["", "## Build speed (`tfgen build`, TensorFlow made unimportable)", "",
              "| spec | command wall time (s) | in-process (s) |", "|---|---:|---:|"]
    for name, timing in builds.items():
        lines.append(f"| {name} | {timing['command_seconds']:.2f} | {timing.get('in_process_seconds', float('nan')):.3f} |")
    lines += ["", "The command's time includes starting Python; in-process is `plan_targets` (validate, render, black)",
              "for one spec after the first.", ""]
    notes = docs / "benchmarks-notes.md"
    if notes.exists():
        lines += [notes.read_text()]
    (docs / "benchmarks.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        cases = list(dict.fromkeys(r["case"] for r in results))
        fig, axes = plt.subplots(1, len(cases), figsize=(4 * len(cases), 3.5), squeeze=False)
        for ax, case in zip(axes[0], cases):
            rows = [r for r in results if r["case"] == case]
            ax.bar([r["system"] for r in rows], [r["examples_per_second"] for r in rows],
                   color=["#999", "#777", "#c66", "#36c", "#333"][: len(rows)])
            ax.set_title(case)
            ax.set_ylabel("examples / s")
            ax.tick_params(axis="x", rotation=45)
        fig.tight_layout()
        fig.savefig(docs / "benchmarks.png", dpi=100)
    except ImportError:
        print("matplotlib is not installed: no chart (pip install -e '.[bench]')", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results" / "latest.json")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), help="run only these cases")
    parser.add_argument("--merge", action="store_true", help="replace these cases in the existing results")
    parser.add_argument("--rounds", type=int, help="rounds (default: 2 full, 1 quick, 1 smoke)")
    parser.add_argument("--worker", nargs=2, metavar=("CASE", "SYSTEM"))
    parser.add_argument("--examples", type=int)
    parser.add_argument("--epochs", type=int)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(run_worker(*args.worker, args.examples, args.epochs)))
        return 0
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    settings = MODES[mode]
    started = time.perf_counter()
    runs: dict[tuple[str, str], list[dict]] = {}
    for round_index in range(args.rounds or settings["rounds"]):
        for case in args.cases or settings["cases"]:
            examples = max(CASES[case]["batch"] * 8, int(CASES[case]["examples"] * settings["scale"]))
            epochs = settings["epochs"] or CASES[case]["epochs"]
            for system in SYSTEMS:
                result = run_one(case, system, examples, epochs, timeout=1800)
                runs.setdefault((case, system), []).append(result)
                print(f"round {round_index + 1} {case:10s} {system:12s} {result['examples_per_second']:10,.0f} examples/s", flush=True)
    results = []
    for (case, system), items in runs.items():
        merged = dict(items[0])
        for key in ("examples_per_second", "first_step_seconds", "peak_rss_mb", "rss_growth_mb", "rss_after_warmup_mb"):
            merged[key] = statistics.median(item[key] for item in items)
        merged["rounds"] = len(items)
        results.append(merged)
    if args.merge and args.results.exists():
        fresh = {r["case"] for r in results}
        kept = [r for r in json.loads(args.results.read_text()) if r["case"] not in fresh]
        results = sorted(kept + results, key=lambda r: (list(CASES).index(r["case"]), SYSTEMS.index(r["system"])))
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(results, indent=1) + "\n")
    verdicts = evaluate(results)
    builds = build_speed()
    command = "python benchmarks/run.py" + (" --quick" if args.quick else " --smoke" if args.smoke else "")
    if args.cases:
        command += " --cases " + " ".join(args.cases) + (" --merge" if args.merge else "")
    if args.rounds:
        command += f" --rounds {args.rounds}"
    args.docs.mkdir(parents=True, exist_ok=True)
    write_report(results, verdicts, builds, mode, time.perf_counter() - started, command, args.docs)
    for description, case, value, met in verdicts:
        print(f"{'met   ' if met else 'MISSED'} {description} [{case}]: {value:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

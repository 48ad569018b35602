"""Scaling of the generated loop: from one worker to two, and with the data and the model.

    python benchmarks/scaling.py            # 3 rounds, each: one worker, then two (about 4 minutes)
    python benchmarks/scaling.py --rounds 1 --examples 20000
    python benchmarks/scaling.py --growth   # an epoch's time at 1x, 4x, 16x examples and parameters

`--growth`: the `mlp` case of benchmarks/run.py (specs/mnist.yaml, synthetic data in memory),
its generated loop and default and tuned `fit` in lockstep (`run.run_case`), at 1x, 4x and 16x the
examples (`--examples` is 1x), then at 1x, 4x and 16x the parameters (its Dense layers widened,
`run.widen`, at 1x the examples); each point's seconds per epoch (median after the first) of the
loop and of the faster fit, and how each grew from 1x. Writes benchmarks/results/growth.json (or
`--out`), which benchmarks/run.py's report shows.

Workers:

The MLP of the seed articles on synthetic in-memory data, built by `tfgen build` with
`strategy: multi_worker_mirrored` and the same per-worker batch (`--batch`, 256), so each worker does the
same work per step. Each worker is pinned to its own core with `taskset`, gets its TF_CONFIG from
`tfgen.launch.tf_config`, and logs examples per second per epoch in its history.jsonl; the figure
is the median after the first (warm-up) epoch. Scaling efficiency is
two workers' examples/s / (2 x one worker's). This machine has 2 cores and its collectives run
over localhost gRPC: a figure, not a target. Writes benchmarks/results/scaling-<batch>.json and prints the
table that docs/benchmarks.md shows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import run as bench
from run import write_script

from tfgen.cluster.launch import free_ports, tf_config


def spec(workers: int, examples: int, epochs: int, batch: int) -> dict:
    return {
        "name": f"scaling{workers}",
        "seed": 0,
        "data": {
            "train": {
                "source": {"type": "synthetic", "examples": examples},
                "batch_size": batch * workers,
                "shuffle": examples,
            },
        },
        "model": {
            "inputs": {"x": {"shape": [784]}},
            "layers": [
                {"type": "Dense", "units": 256, "activation": "relu"},
                {"type": "Dense", "units": 256, "activation": "relu"},
            ],
            "outputs": {"y": [{"type": "Dense", "units": 10}]},
        },
        "targets": {"y": {"shape": [], "dtype": "int32", "classes": 10}},
        "losses": {"y": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        "metrics": {"y": ["SparseCategoricalAccuracy"]},
        "optimizer": {"type": "Adam", "learning_rate": 0.001},
        "strategy": {"type": "multi_worker_mirrored"},
        "train": {"epochs": epochs},
        "checkpoint": {"every_epochs": 1000, "keep": 1},
    }


def run(script: Path, workers: int, folder: Path, timeout: float) -> float:
    """Median examples/s after the first epoch of one run of `workers` pinned workers."""
    hosts = [f"localhost:{port}" for port in free_ports(workers)]
    output = folder / f"run{workers}-{time.monotonic_ns()}"
    processes = []
    for index in range(workers):
        env = {
            **os.environ,
            "TF_CONFIG": tf_config(hosts, index),
            "CUDA_VISIBLE_DEVICES": "-1",
            "TF_CPP_MIN_LOG_LEVEL": "3",
        }
        command = ["taskset", "-c", str(index), sys.executable, str(script), "--synthetic", "--output-dir", str(output)]
        processes.append(
            subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        )
    for process in processes:
        _, stderr = process.communicate(timeout=timeout)
        if process.returncode:
            raise SystemExit(f"a worker failed ({process.returncode}): {stderr.strip().splitlines()[-1:]}")
    rows = [json.loads(line) for line in (output / "history.jsonl").read_text().splitlines()]
    return statistics.median(row["examples_per_second"] for row in rows[1:])


GROWTH_CASE = "mlp"
GROWTH_SYSTEMS = ["fit_default", "fit_tuned", "tfgen"]
FACTORS = (1, 4, 16)


def parameters(spec: dict) -> int:
    """The weights of a spec of one flat input, Flatten/Rescaling and Dense layers, Dense heads."""
    import math

    (field,) = spec["model"]["inputs"].values()
    size, total = math.prod(field["shape"]), 0
    layers = [*spec["model"]["layers"], *[head for heads in spec["model"]["outputs"].values() for head in heads]]
    for layer in layers:
        if layer["type"] == "Dense":
            total += size * layer["units"] + layer["units"]
            size = layer["units"]
    return total


def width_for(factor: int, base: dict) -> float:
    """The Dense width multiplier that gives `factor` times the base spec's parameters (bisection)."""
    target, low, high = factor * parameters(base), 0.5, 64.0
    for _ in range(40):
        middle = (low + high) / 2
        spec = json.loads(json.dumps(base))
        bench.widen(spec, middle)
        low, high = (middle, high) if parameters(spec) < target else (low, middle)
    return high


def growth_points(examples: int) -> list[dict]:
    """The points measured: the data grown at 1x the model, then the model at 1x the data."""
    base = bench.benchmark_spec(bench.CASES[GROWTH_CASE], examples, 2)
    points = [{"grows": "data", "factor": f, "examples": examples * f, "width": 1.0} for f in FACTORS]
    points += [{"grows": "model", "factor": f, "examples": examples, "width": width_for(f, base)} for f in FACTORS[1:]]
    for point in points:
        spec = json.loads(json.dumps(base))
        bench.widen(spec, point["width"])
        point["parameters"] = parameters(spec)
    return points


def growth(examples: int, epochs: int, rounds: int) -> list[dict]:
    """Each point's seconds per epoch for each system (the median over rounds), and the best fit's."""
    points = growth_points(examples)
    for round_index in range(rounds):
        for point in points:
            env = {bench.WIDTH_ENV: repr(point["width"])}
            systems = GROWTH_SYSTEMS[:: -1 if round_index % 2 else 1]
            for result in bench.run_case(GROWTH_CASE, systems, point["examples"], epochs, 1800, {}, env=env):
                seconds = point["examples"] / result["examples_per_second"]
                point.setdefault("rounds_seconds", {}).setdefault(result["system"], []).append(seconds)
            print(
                f"round {round_index + 1}: {point['grows']} x{point['factor']}: {point['rounds_seconds']}", flush=True
            )
    for point in points:
        point["seconds"] = {system: statistics.median(each) for system, each in point["rounds_seconds"].items()}
        fits = [system for system in ("fit_default", "fit_tuned") if system in point["seconds"]]
        point["best_fit"] = min(fits, key=point["seconds"].get)
    return points


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, help="default: 3 (--growth: 1)")
    parser.add_argument(
        "--examples", type=int, help="synthetic training examples per run (default: 40960; --growth: 3750 at 1x)"
    )
    parser.add_argument("--epochs", type=int, help="default: 4 (--growth: 5)")
    parser.add_argument("--batch", type=int, default=256, help="examples per worker per step")
    parser.add_argument("--out", type=Path, default=None, help="default: benchmarks/results/scaling-<batch>.json")
    parser.add_argument("--growth", action="store_true", help="an epoch's time as the data and the model grow")
    args = parser.parse_args(argv)
    if args.growth:
        return main_growth(args, argv)
    args.rounds, args.examples, args.epochs = args.rounds or 3, args.examples or 40960, args.epochs or 4
    if (os.cpu_count() or 1) < 2:
        raise SystemExit("needs 2 cores: each worker is pinned to its own")
    results: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        scripts = {
            n: write_script(spec(n, args.examples, args.epochs, args.batch), folder, f"scaling{n}") for n in results
        }
        for round_index in range(args.rounds):
            for workers, script in scripts.items():  # interleaved: the machine is shared
                results[workers].append(run(script, workers, folder, timeout=900))
                print(
                    f"round {round_index + 1}: {workers} worker(s) {results[workers][-1]:,.0f} examples/s", flush=True
                )
    one, two = (statistics.median(results[n]) for n in (1, 2))
    report = {
        "per_worker_batch": args.batch,
        "examples": args.examples,
        "epochs": args.epochs,
        "rounds": args.rounds,
        "examples_per_second": {"1": one, "2": two},
        "runs": {str(n): v for n, v in results.items()},
        "scaling_efficiency": two / (2 * one),
        "command": "python benchmarks/scaling.py " + " ".join(argv or sys.argv[1:]),
    }
    out = args.out or ROOT / "benchmarks" / "results" / f"scaling-{args.batch}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print("| workers (one core each) | examples/s | scaling efficiency |\n|---:|---:|---:|")
    print(f"| 1 | {one:,.0f} | 1.00 |\n| 2 | {two:,.0f} | {two / (2 * one):.2f} |")
    return 0


def main_growth(args, argv: list[str] | None) -> int:
    """`--growth`: measure, write growth.json, print the table."""
    epochs = args.epochs or 5
    points = growth(args.examples or 3750, epochs, args.rounds or 1)
    command = "python benchmarks/scaling.py " + " ".join(argv or sys.argv[1:])
    out = args.out or ROOT / "benchmarks" / "results" / "growth.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": command, "epochs": epochs, "points": points}, indent=1) + "\n")
    print("\n".join(bench.growth_lines(points)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

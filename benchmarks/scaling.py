"""Scaling of the generated loop from one worker to two (multi_worker_mirrored, one core each).

    python benchmarks/scaling.py            # 3 rounds, each: one worker, then two (about 4 minutes)
    python benchmarks/scaling.py --rounds 1 --examples 20000

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--examples", type=int, default=40960, help="synthetic training examples per run")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch", type=int, default=256, help="examples per worker per step")
    parser.add_argument("--out", type=Path, default=None, help="default: benchmarks/results/scaling-<batch>.json")
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())

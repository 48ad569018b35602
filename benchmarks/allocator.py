"""What glibc's malloc arenas do to a streamed run's memory, and what capping them costs.

The benchmark's target "RSS growth < 2% over 10 epochs" is missed on the streamed MLP cases by
the generated loop and by tuned `fit` alike. Two measurements tell a leak from the allocator:

    python benchmarks/run.py --write-data mlp_npz_stream DATA --examples 60000
    python benchmarks/allocator.py rss DATA --system tfgen --epochs 30
    MALLOC_ARENA_MAX=2 python benchmarks/allocator.py rss DATA --system tfgen --epochs 30
    python benchmarks/allocator.py lockstep DATA --epochs 24

`rss`: one system alone on `mlp_npz_stream`, its RSS after each epoch (a leak keeps growing;
settling stops). `lockstep`: the generated loop as it is beside copies whose environment caps
the arenas (`MALLOC_ARENA_MAX`) or fixes the mmap threshold, in turns as the benchmark runs its
systems; each one's RSS growth, and its mean speed over the epochs in the machine's fast mode.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # benchmarks/run.py: its worker, and the lockstep driver

CASE = "mlp_npz_stream"
EXAMPLES = 60000
FAST_FROM = 40000  # examples/s: an epoch in the machine's fast mode (the slow one is ~25k)
# Each variant's name, and what it sets in the generated loop's environment.
VARIANTS = {
    "as is": {},
    "MALLOC_ARENA_MAX=2": {"MALLOC_ARENA_MAX": "2"},
    "MALLOC_ARENA_MAX=4": {"MALLOC_ARENA_MAX": "4"},
    "MALLOC_MMAP_THRESHOLD_=131072": {"MALLOC_MMAP_THRESHOLD_": "131072"},
}


def rss_by_epoch(data: Path, system: str, epochs: int) -> None:
    """Print `system`'s RSS after each epoch, in this process."""
    measure = run.rss_mb

    def printed() -> float:
        value = measure()
        print(f"RSS after an epoch: {value:.1f} MB", flush=True)
        return value

    run.rss_mb = printed
    result = run.run_worker(CASE, system, EXAMPLES, epochs, data)
    print(f"{system}: {result['examples_per_second']:,.0f} examples/s (median epoch)")


def lockstep(data: Path, epochs: int) -> None:
    """The loop in each of VARIANTS' environments, in turns; growth and fast-mode speed."""
    with tempfile.TemporaryDirectory() as folder, contextlib.ExitStack() as stack:
        workers = [
            run.start_worker(stack, Path(folder, str(index)), CASE, "tfgen", EXAMPLES, epochs, data, env=settings)
            for index, settings in enumerate(VARIANTS.values())
        ]
        results = run.run_in_lockstep(workers, time.monotonic() + 3600)
    for name, result in zip(VARIANTS, results, strict=True):
        fast = [speed for speed in result["epoch_examples_per_second"][1:] if speed > FAST_FROM]
        growth = result["rss_growth_10_epochs_mb"] / result["rss_after_warmup_mb"]
        mean = statistics.mean(fast) if fast else float("nan")
        print(f"{name:32} RSS growth over 10 epochs {growth:5.1%}; fast epochs: {len(fast)}, mean {mean:,.0f}/s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("measure", choices=["rss", "lockstep"])
    parser.add_argument("data", type=Path, help="written by run.py --write-data mlp_npz_stream")
    parser.add_argument("--system", default="tfgen", choices=run.STREAMED, help="rss: which system")
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if args.measure == "rss":
        rss_by_epoch(args.data, args.system, args.epochs)
    else:
        lockstep(args.data, args.epochs)


if __name__ == "__main__":
    main()

"""The streamed loop against tuned `fit`, in one process, in short alternated turns.

The lockstep benchmark (`run.py`) times whole epochs in separate processes, and this machine's
speed moves between two modes about 2.5x apart; alternating turns of a few hundred steps in one
process compares the loops' per-step cost within the same mode. On `mlp_npz_stream`'s data and
script:

    python benchmarks/run.py --write-data mlp_npz_stream DATA --examples 60000
    python benchmarks/alternate_turns.py --write OLD --data DATA   # in each checkout to compare
    python benchmarks/alternate_turns.py --data DATA --rounds 80 fit OLD NEW

Each system is `fit` (tuned `fit`'s `train_function`, 100 steps a call) or a folder written by
`--write` (the generated script and its `tfgen_runtime`, possibly edited); the figure is the
median over rounds of each turn's speed over the first system's turn beside it.
"""

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).parent))
import run as bench

CASE = "mlp_npz_stream"


def case_spec(data: Path) -> dict:
    return bench.benchmark_spec(bench.CASES[CASE], 60000, 12, data)


def load_script(folder: Path):
    """The script in `folder`, with its own `tfgen_runtime` (not another folder's)."""
    for name in [m for m in sys.modules if m.split(".")[0] == "tfgen_runtime"]:
        del sys.modules[name]
    sys.path.insert(0, str(folder))
    module_spec = importlib.util.spec_from_file_location(f"script_{len(sys.modules)}", folder / "bench.py")
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    sys.path.remove(str(folder))
    assert module.rt.__file__.startswith(str(folder)), module.rt.__file__
    return module


def fit_turn(spec: dict, folder: Path, steps: int):
    import keras

    module = load_script(folder)
    keras.utils.set_random_seed(0)
    model = module.build_model()
    bench.compile_fit(model, module.build_optimizer(), spec, "fit_tuned")
    iterator = iter(module.train_pipeline(module.load_data()[0]).repeat())
    model.make_train_function()

    def turn():
        for _ in range(steps // bench.TUNED_STEPS_PER_EXECUTION):
            model.train_function(iterator)
        float(model.optimizer.iterations.numpy())

    return turn


def loop_turn(folder: Path, steps: int):
    import keras
    import tensorflow as tf

    module = load_script(folder)
    module.rt.trainer.IN_MEMORY_BUDGET_BYTES = bench.STREAM_BUDGET_BYTES
    keras.utils.set_random_seed(0)
    strategy = tf.distribute.get_strategy()
    trainer = module.Trainer(strategy, folder)
    trainer.checkpoint.open(folder / "checkpoints")
    train = module.load_data()[0]
    trainer.use_data(train, "auto", None)
    trainer.compile_step_if_long(10**6)
    iterator = iter(strategy.experimental_distribute_dataset(module.train_pipeline(train).repeat()))

    def turn():
        trainer.train_from_iterator(iterator, tf.constant(steps))
        float(trainer.state.skipped.numpy())

    return turn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("systems", nargs="*", help="fit, or folders written by --write")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--write", type=Path, help="write this checkout's script into this folder")
    parser.add_argument("--rounds", type=int, default=80)
    parser.add_argument("--steps", type=int, default=600, help="steps a turn (a multiple of 100)")
    args = parser.parse_args()
    spec = case_spec(args.data.resolve())
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        bench.write_script(spec, args.write.resolve())
        return
    folders = [Path(s).resolve() for s in args.systems if s != "fit"]
    turns = {}
    for system in args.systems:
        if system == "fit":
            turns[system] = fit_turn(spec, folders[0], args.steps)
        else:
            turns[system] = loop_turn(Path(system).resolve(), args.steps)
    speeds = {system: [] for system in turns}
    for _ in range(args.rounds):
        for system, turn in turns.items():
            started = time.perf_counter()
            turn()
            speeds[system].append(args.steps * 32 / (time.perf_counter() - started))
    first = args.systems[0]
    for system, figures in speeds.items():
        ratios = [a / b for a, b in zip(figures[2:], speeds[first][2:], strict=True)]
        print(
            f"{system}: median {statistics.median(figures[2:]):,.0f} examples/s, {statistics.median(ratios):.3f}x {first}"
        )


if __name__ == "__main__":
    main()

"""Run a generated training script the way a test needs, without test-only options in it.

    python tests/e2e/harness.py SCRIPT --cpus N --weights OUT.npz [--initial-weights OUT.npz]
        [--saved-weights PREFIX] -- ARGS...

Splits the CPU into N logical devices (before TensorFlow initialises them) so MirroredStrategy
has replicas, imports the generated module, runs `main(ARGS)`, and saves the final weights (and,
if asked, the weights the model starts from, and those at each checkpoint the run saves, as
PREFIX-1.npz, PREFIX-2.npz, ...) for comparison. tests/e2e/adapt_runner.py shares the functions
that do this.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys


def parser() -> argparse.ArgumentParser:
    """The options every runner takes: SCRIPT and --cpus (add more, then `parse`)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("--cpus", type=int, default=1)
    return parser


def parse(parser: argparse.ArgumentParser) -> tuple[argparse.Namespace, list[str]]:
    """`OPTIONS -- ARGS`: the runner's options, and ARGS, the script's own command line."""
    split = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
    return parser.parse_args(sys.argv[1:split]), sys.argv[split + 1 :]


def split_cpu(cpus: int) -> None:
    """The CPU as `cpus` logical devices (before TensorFlow initialises them), so strategies have replicas."""
    import tensorflow as tf

    if cpus > 1:
        (cpu,) = tf.config.list_physical_devices("CPU")
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * cpus)


def load_script(path: str):
    """The generated script imported as a module."""
    spec = importlib.util.spec_from_file_location("generated_script", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record_models(module, on_build=None) -> list:
    """Keep every model the script's main() builds (in the returned list); `on_build(model)` on each."""
    built, build_model = [], module.build_model

    def recording_build_model(*sizes):  # `vocabulary_sizes`, where the script has lookups sized by them
        built.append(build_model(*sizes))
        if on_build:
            on_build(built[-1])
        return built[-1]

    module.build_model = recording_build_model
    return built


def record_saved_weights(module, built: list, prefix: str) -> None:
    """Write the model's weights at each checkpoint the run saves to PREFIX-<n>.npz (n from 1)."""
    import numpy as np

    save, saves = module.rt.RunCheckpoint.save, []

    def save_and_record(checkpoint, number):
        path = save(checkpoint, number)
        saves.append(path)
        np.savez(f"{prefix}-{len(saves)}.npz", *built[-1].get_weights())
        return path

    module.rt.RunCheckpoint.save = save_and_record


def main() -> None:
    arguments = parser()
    arguments.add_argument("--weights")
    arguments.add_argument("--initial-weights")
    arguments.add_argument("--saved-weights")
    arguments.add_argument("--history")
    options, argv = parse(arguments)

    import numpy as np

    def save_initial(model):
        if options.initial_weights:
            np.savez(options.initial_weights, *model.get_weights())

    split_cpu(options.cpus)
    module = load_script(options.script)
    built = record_models(module, save_initial)  # to read the model's weights before and after training
    if options.saved_weights:
        record_saved_weights(module, built, options.saved_weights)
    history = module.main(argv)
    if options.history:
        with open(options.history, "w") as handle:
            json.dump(history, handle)
    if options.weights:
        np.savez(options.weights, *built[-1].get_weights())


if __name__ == "__main__":
    main()

"""Run a generated training script the way a test needs, without test-only options in it.

    python tests/harness.py SCRIPT --cpus N --weights OUT.npz [--initial-weights OUT.npz] -- ARGS...

Splits the CPU into N logical devices (before TensorFlow initialises them) so MirroredStrategy
has replicas, imports the generated module, runs `main(ARGS)`, and saves the final weights (and,
if asked, the weights the model starts from) for comparison.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("--cpus", type=int, default=1)
    parser.add_argument("--weights")
    parser.add_argument("--initial-weights")
    parser.add_argument("--history")
    split = sys.argv.index("--") if "--" in sys.argv else len(sys.argv)
    options = parser.parse_args(sys.argv[1:split])
    argv = sys.argv[split + 1 :]

    import numpy as np
    import tensorflow as tf

    if options.cpus > 1:
        (cpu,) = tf.config.list_physical_devices("CPU")
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * options.cpus)

    spec = importlib.util.spec_from_file_location("generated_script", options.script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    # Keep the model main() builds, to read its weights before and after training.
    built = []
    build_model = module.build_model

    def recording_build_model():
        built.append(build_model())
        if options.initial_weights:
            np.savez(options.initial_weights, *built[-1].get_weights())
        return built[-1]

    module.build_model = recording_build_model
    history = module.main(argv)
    if options.history:
        with open(options.history, "w") as handle:
            json.dump(history, handle)
    if options.weights:
        np.savez(options.weights, *built[-1].get_weights())


if __name__ == "__main__":
    main()

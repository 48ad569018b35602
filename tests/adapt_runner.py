"""Run a generated script that has adapted layers and report what adaptation did.

    python tests/adapt_runner.py SCRIPT OUT.json [--cpus N] [--kill-after-saves K] -- ARGS...

Counts the calls to `Normalization.adapt`, runs `main(ARGS)`, and writes to OUT.json the calls,
the adapted layer's mean and variance, the final weights' checksums, and the mean and variance of
the training batches the layer should have seen. `--kill-after-saves K` SIGKILLs the process
right after its K-th checkpoint is written (a real kill, at a known point).
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import signal
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("report")
    parser.add_argument("--cpus", type=int, default=1)
    parser.add_argument("--kill-after-saves", type=int)
    split = sys.argv.index("--")
    options, argv = parser.parse_args(sys.argv[1:split]), sys.argv[split + 1 :]

    import keras
    import numpy as np
    import tensorflow as tf

    if options.cpus > 1:
        (cpu,) = tf.config.list_physical_devices("CPU")
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * options.cpus)

    calls = []
    adapt = keras.layers.Normalization.adapt

    def counting_adapt(layer, data):
        calls.append(layer.name)
        return adapt(layer, data)

    keras.layers.Normalization.adapt = counting_adapt
    if options.kill_after_saves:
        save, saves = tf.train.CheckpointManager.save, []

        def save_then_die(manager, *args, **kwargs):
            path = save(manager, *args, **kwargs)
            saves.append(path)
            if len(saves) == options.kill_after_saves:
                os.kill(os.getpid(), signal.SIGKILL)
            return path

        tf.train.CheckpointManager.save = save_then_die

    spec = importlib.util.spec_from_file_location("generated_script", options.script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    built = []
    build_model = module.build_model
    module.build_model = lambda: built.append(build_model()) or built[-1]
    module.main(argv)

    model, (name,) = built[-1], module.ADAPT_BATCHES
    layer = model.get_layer(name)
    train, validation = module.load_data()
    # The raw training batches adaptation should have used: the first ones, never augmented.
    unaugmented = {"augment": False} if "augment" in inspect.signature(module.train_pipeline).parameters else {}
    batches = module.train_pipeline(train, **unaugmented).take(module.ADAPT_BATCHES[name])
    seen = np.concatenate([x["measurements"] for x, _ in batches])
    validation_rows = {row.tobytes() for row in validation[0]["measurements"]}
    report = {
        "adapt_calls": calls,
        "mean": layer.adapt_mean.numpy().tolist(),
        "variance": layer.adapt_variance.numpy().tolist(),
        "applied_mean": np.asarray(layer.mean).ravel().tolist(),  # what `call` uses
        "seen_mean": seen.mean(axis=0).tolist(),
        "seen_variance": seen.var(axis=0).tolist(),
        "seen_rows_in_validation": sum(row.tobytes() in validation_rows for row in seen),
        "validation_mean": validation[0]["measurements"].mean(axis=0).tolist(),
        "weights": [float(np.asarray(w, np.float64).sum()) for w in model.get_weights()],
        "weights_bytes": [np.asarray(w).tobytes().hex() for w in model.get_weights()],
    }
    with open(options.report, "w") as handle:
        json.dump(report, handle)


if __name__ == "__main__":
    main()

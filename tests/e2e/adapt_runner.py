"""Run a generated script that has adapted layers and report what adaptation did.

    python tests/e2e/adapt_runner.py SCRIPT OUT.json [--cpus N] [--kill-after-saves K] -- ARGS...

Counts the calls to `Normalization.adapt`, runs `main(ARGS)`, and writes to OUT.json the calls,
the adapted layer's mean and variance, the final weights' checksums, and the mean and variance of
the training batches the layer should have seen. `--kill-after-saves K` SIGKILLs the process
right after its K-th checkpoint is written (a real kill, at a known point).
"""

from __future__ import annotations

import inspect
import json
import os
import signal

from harness import load_script, parse, parser, record_models, split_cpu


def main() -> None:
    arguments = parser()
    arguments.add_argument("report")
    arguments.add_argument("--kill-after-saves", type=int)
    options, argv = parse(arguments)

    import keras
    import numpy as np
    import tensorflow as tf

    split_cpu(options.cpus)
    calls = []

    def counting(adapt):
        def counting_adapt(layer, data, *args, **kwargs):
            calls.append(layer.name)
            return adapt(layer, data, *args, **kwargs)

        return counting_adapt

    for kind in (keras.layers.Normalization, keras.layers.Discretization, keras.layers.IntegerLookup):
        kind.adapt = counting(kind.adapt)
    if options.kill_after_saves:
        save, saves = tf.train.CheckpointManager.save, []

        def save_then_die(manager, *args, **kwargs):
            path = save(manager, *args, **kwargs)
            saves.append(path)
            if len(saves) == options.kill_after_saves:
                os.kill(os.getpid(), signal.SIGKILL)
            return path

        tf.train.CheckpointManager.save = save_then_die

    module = load_script(options.script)
    built = record_models(module)
    module.main(argv)

    adapted = list(calls)  # what the script adapted (the checks below adapt fresh layers)
    model, name = built[-1], next(iter(module.ADAPT_BATCHES))
    layer = model.get_layer(name)
    train, validation = module.load_data()
    # The raw training batches adaptation should have used: the first ones, never augmented.
    unaugmented = {"augment": False} if "augment" in inspect.signature(module.train_pipeline).parameters else {}
    batches = module.train_pipeline(train, **unaugmented).take(module.ADAPT_BATCHES[name])
    seen = np.concatenate([x["measurements"] for x, _ in batches])
    validation_rows = {row.tobytes() for row in validation[0]["measurements"]}
    report = {
        "adapt_calls": adapted,
        "mean": layer.adapt_mean.numpy().tolist(),
        "variance": layer.adapt_variance.numpy().tolist(),
        "applied_mean": np.asarray(layer.mean).ravel().tolist(),  # what `call` uses
        "seen_mean": seen.mean(axis=0).tolist(),
        "seen_variance": seen.var(axis=0).tolist(),
        "seen_rows_in_validation": sum(row.tobytes() in validation_rows for row in seen),
        "validation_mean": validation[0]["measurements"].mean(axis=0).tolist(),
        "weights_bytes": [np.asarray(w).tobytes().hex() for w in model.get_weights()],
    }
    report.update(kept_outside(model, module, (train, validation), unaugmented, argv))
    with open(options.report, "w") as handle:
        json.dump(report, handle)


def kept_outside(model, module, data, unaugmented, argv):
    """For each adapted Discretization/IntegerLookup: what it learned, what a fresh layer learns
    from the same training batches (and from the validation rows), and what model.keras holds."""
    import keras

    train, validation = data

    def learned(layer):
        if isinstance(layer, keras.layers.Discretization):
            return [float(b) for b in layer.bin_boundaries]
        return [int(t) for t in layer.get_vocabulary()]

    report = {"learned": {}, "seen_learned": {}, "validation_learned": {}, "exported": {}}
    exported = os.path.join(argv[argv.index("--output-dir") + 1], "model.keras")
    saved = keras.saving.load_model(exported) if os.path.exists(exported) else None
    for name, steps in module.ADAPT_BATCHES.items():
        layer = model.get_layer(name)
        if isinstance(layer, keras.layers.Normalization):
            continue
        before = keras.Model(model.input, layer.input)
        config = {k: v for k, v in layer.get_config().items() if k not in ("bin_boundaries", "vocabulary_size", "name")}
        fresh = [type(layer).from_config(config) for _ in range(2)]
        fresh[0].adapt([before(x, training=False) for x, _ in module.train_pipeline(train, **unaugmented).take(steps)])
        fresh[1].adapt([before(validation[0], training=False)])
        report["learned"][name] = learned(layer)
        report["seen_learned"][name], report["validation_learned"][name] = learned(fresh[0]), learned(fresh[1])
        report["exported"][name] = learned(saved.get_layer(name)) if saved else None
    return report


if __name__ == "__main__":
    main()

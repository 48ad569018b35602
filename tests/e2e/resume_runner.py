"""Run a generated script and SIGKILL it at a known checkpoint, or run it to the end.

    python tests/e2e/resume_runner.py SCRIPT --weights OUT.npz [--cpus N]
        [--kill-in-epoch E | --kill-after-saves K] [--tfds-examples N] -- ARGS...

`--kill-in-epoch E` SIGKILLs the process right after the first checkpoint saved inside epoch E
(checkpoint.every_steps); `--kill-after-saves K` right after its K-th save of any kind. A real
kill: no handler runs, as when the machine goes away mid-epoch. A run that ends writes its final
weights to OUT.npz. `--tfds-examples N` runs the script inside tfds.testing.mock_data, each
split N random images of TFDS's mnist.
"""

from __future__ import annotations

import contextlib
import os
import signal
import zlib

from harness import load_script, parse, parser, record_models, split_cpu


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def kill_in_epoch(rt, epoch: int) -> None:
    """SIGKILL right after the first save inside `epoch`."""
    save_in_epoch = rt.RunCheckpoint.save_in_epoch

    def save_then_die(checkpoint, step):
        path = save_in_epoch(checkpoint, step)
        if checkpoint.epoch() + 1 == epoch:  # `epoch()`: the last one finished
            die()
        return path

    rt.RunCheckpoint.save_in_epoch = save_then_die


def kill_after_saves(count: int) -> None:
    import tensorflow as tf

    save, saves = tf.train.CheckpointManager.save, []

    def save_then_die(manager, *args, **kwargs):
        path = save(manager, *args, **kwargs)
        saves.append(path)
        if len(saves) == count:
            die()
        return path

    tf.train.CheckpointManager.save = save_then_die


def mocked_tfds(examples: int):
    """tfds.testing.mock_data giving each split `examples` random 28x28 images and labels."""
    import numpy as np
    import tensorflow as tf
    import tensorflow_datasets as tfds

    def random_split(builder, split, decoders=None, read_config=None, **kwargs):
        rng = np.random.default_rng(zlib.crc32(str(split).encode()))
        images = rng.integers(0, 255, size=(examples, 28, 28, 1), dtype=np.uint8)
        labels = rng.integers(0, 10, size=examples).astype(np.int64)
        return tf.data.Dataset.from_tensor_slices({"image": images, "label": labels})

    return tfds.testing.mock_data(policy=tfds.testing.MockPolicy.USE_CODE, as_dataset_fn=random_split)


def main() -> None:
    arguments = parser()
    arguments.add_argument("--weights", required=True)
    arguments.add_argument("--kill-in-epoch", type=int)
    arguments.add_argument("--kill-after-saves", type=int)
    arguments.add_argument("--tfds-examples", type=int)
    options, argv = parse(arguments)

    import numpy as np

    split_cpu(options.cpus)
    module = load_script(options.script)
    if options.kill_in_epoch:
        kill_in_epoch(module.rt, options.kill_in_epoch)
    if options.kill_after_saves:
        kill_after_saves(options.kill_after_saves)
    built = record_models(module)
    mocked = mocked_tfds(options.tfds_examples) if options.tfds_examples else contextlib.nullcontext()
    with mocked:
        module.main(argv)
    np.savez(options.weights, *built[-1].get_weights())


if __name__ == "__main__":
    main()

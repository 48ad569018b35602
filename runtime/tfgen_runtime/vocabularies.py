"""Lookups whose output width is the size of the vocabulary they adapt (`one_hot`,
`multi_hot` or `count`, not padded to `max_tokens`): the size is found before the model is
built, as Keras's own adapt-then-build, and run.json records it, so that a resumed run
builds the same model before it restores the checkpoint."""

import json
import os
import stat

import keras
import tensorflow as tf

MAX_RECORD_BYTES = 2**20  # run.json holds names and numbers, never this much


def vocabulary_sizes(run, build_model, copies, batches, steps, fresh=False):
    """{layer name: vocabulary size} for `build_model(vocabulary_sizes)`: the sizes run.json
    records, when this run resumes one that recorded them; else found by adapting `copies`
    (a fresh copy of each lookup, by layer name) on the first `steps[name]` `batches`.
    `run.vocabulary_sizes` keeps them for run.json. `fresh`: ignore the previous run."""
    sizes = None
    if not (fresh or run.args.fresh):
        sizes = recorded_sizes(run.output / "run.json", copies)
    if sizes is None:
        sizes = adapted_sizes(build_model, copies, batches, steps)
    run.vocabulary_sizes = sizes
    return sizes


def adapted_sizes(build_model, copies, batches, steps):
    """Adapt each copy on what reaches its layer, as `adapt` later fits the layer itself (the
    same batches: the first epoch's are seeded); return their vocabularies' sizes. Each is
    found on a model whose adapted layers before it are adapted in the script's order (the
    lookups found so far at their width, the others at a stand-in one)."""
    order = list(steps)
    sizes = {}
    for name in [n for n in order if n in copies]:
        stand_ins = {n: layer.vocabulary_size() + 1 for n, layer in copies.items()}
        probe = build_model({**stand_ins, **sizes})
        for earlier in order[: order.index(name)]:
            fit(probe.get_layer(earlier), probe, earlier, batches.take(steps[earlier]))
        fit(copies[name], probe, name, batches.take(steps[name]))
        sizes[name] = int(copies[name].vocabulary_size())
        print(f"{name}: a vocabulary of {sizes[name]} (its output width)")
    return sizes


def fit(layer, model, name, batches):
    """`layer.adapt` on what reaches `model`'s layer `name` of `batches` (strings go in as
    one batch of them, as `adapt` wants)."""
    before = keras.Model(model.input, model.get_layer(name).input)
    inputs = [before(x, training=False) for x, _ in batches]
    strings = bool(inputs) and inputs[0].dtype == tf.string
    layer.adapt(tf.concat(inputs, axis=0) if strings else inputs)


def recorded_sizes(path, names):
    """The sizes the run.json at `path` records for exactly `names` (positive integers), or
    None when it is missing, not a regular file, unreadable or records others."""
    try:
        status = os.stat(path)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_RECORD_BYTES:
            return None
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    sizes = record.get("vocabulary_sizes") if isinstance(record, dict) else None
    if not isinstance(sizes, dict) or set(sizes) != set(names):
        return None
    if not all(type(size) is int and size > 0 for size in sizes.values()):
        return None
    return sizes

"""`cache: true` reads a streamed training source once for the whole run, not once an epoch (each
epoch's pipeline is built again, seeded per epoch; the cache under it is one)."""

from __future__ import annotations

import pytest
from conftest import base_spec, load_module, write_module

pytestmark = pytest.mark.slow

SOURCE = """import numpy as np
import tensorflow as tf

PASSES = []  # one entry per complete pass over the examples


def load():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(96, 8)).astype("float32")
    y = rng.integers(0, 3, size=96).astype("int32")

    def examples():
        yield from zip(x, y, strict=True)
        PASSES.append(1)

    signature = (tf.TensorSpec([8], tf.float32), tf.TensorSpec([], tf.int32))
    return tf.data.Dataset.from_generator(examples, output_signature=signature)
"""


@pytest.mark.parametrize("cache", [True, False], ids=["cached", "not-cached"])
def test_a_cached_generator_source_is_read_once_for_all_epochs(build_spec, tmp_path, cache):
    module_name = f"counted_{'cached' if cache else 'plain'}"  # earlier tests' folders stay on sys.path
    write_module(tmp_path, module_name, SOURCE)
    source = {"type": "python", "function": f"{module_name}:load"}
    spec = base_spec()
    spec["data"] = {"train": {"source": source, "batch_size": 16, "shuffle": 96, "cache": cache}}
    spec["train"] = {"epochs": 3}
    script = load_module(build_spec(spec))
    history = script.main(["--output-dir", str(tmp_path / "run"), "--fresh"])
    source_module = __import__(module_name)
    assert len(history) == 3
    # The count of an epoch's batches (unknown for a generator) is a pass; cached, it is the only one.
    assert len(source_module.PASSES) == (1 if cache else 4)

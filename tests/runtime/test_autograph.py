"""AutoGraph rewrites only the loops over steps: the step and what it calls run as written.

AutoGraph converts each function a `tf.function` calls, on its first trace; for the digits
script that was about 0.6 s of its start (its first epoch from process start 1.09x `fit`'s,
then 1.0x). The step functions hold no Python control flow over tensors, so a conversion of
any of them is wasted time, and a step that needed one would fail to trace, not run wrongly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import base_spec

# The functions AutoGraph may rewrite: the loops over steps, and the helpers they call directly.
LOOPS = {
    "StandardTrainer.train_from_memory",
    "StandardTrainer.train_from_iterator",
    "StandardTrainer.on_replicas",
    "StandardTrainer.finite_weights",
    "carry_in",
    "carry_out",
}

RECORD_CONVERSIONS = """
import json, runpy, sys
from tensorflow.python.autograph.impl import api

converted = set()
convert = api._convert_actual


def recording(entity, program_context):
    converted.add(getattr(entity, "__qualname__", repr(entity)))
    return convert(entity, program_context)


api._convert_actual = recording
script, *sys.argv[1:] = sys.argv[1:]
sys.argv[0] = script
runpy.run_path(script, run_name="__main__")
print("CONVERTED " + json.dumps(sorted(converted)))
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "data, train",
    [
        ({}, {}),  # in memory; the step is a plain method (XLA only in long runs)
        ({"in_memory": False}, {"jit_compile": True}),  # streamed; the step a tf.function
    ],
    ids=["in-memory", "streamed-xla"],
)
def test_only_the_loops_are_converted(build_spec, tmp_path, data, train):
    spec = base_spec()
    spec["data"]["train"].update(data)
    spec["train"].update(train)
    script = build_spec(spec)
    result = subprocess.run(
        [sys.executable, "-c", RECORD_CONVERSIONS, str(script), "--output-dir", str(tmp_path / "run"), "--epochs", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    converted = set(json.loads(result.stdout.split("CONVERTED ")[-1]))
    loop = "StandardTrainer.train_from_memory" if not data else "StandardTrainer.train_from_iterator"
    assert loop in converted  # the recording sees conversions
    assert converted <= LOOPS, f"converted beyond the loops: {sorted(converted - LOOPS)}"

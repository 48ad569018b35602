"""`algorithm: {type: custom}` at build time: `tfgen lint`'s findings in the step's module fail
validate, build and validate --deep (at the module's file:line:col), and a clean module passes."""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOT, run_tfgen, tfgen_here

BAD_STEP = """import tensorflow as tf


def train_step(networks, features, targets, ctx):
    model = networks["classifier"]
    with tf.GradientTape() as tape:
        logits = model(features, training=True)["digit"]
        per_example = tf.keras.losses.sparse_categorical_crossentropy(targets["digit"], logits, from_logits=True)
        loss = ctx.average(per_example)
    loss += tf.add_n(model.losses)
    gradients = tape.gradient(loss, model.trainable_variables)
    ctx.apply_gradients("classifier", gradients, model.trainable_variables)
    return {"loss": per_example, "accuracy": per_example}
"""


def _spec_beside(tmp_path, steps: str | None):
    shutil.copy(ROOT / "specs" / "custom_step.yaml", tmp_path / "custom_step.yaml")
    if steps is None:
        shutil.copy(ROOT / "specs" / "my_steps.py", tmp_path / "my_steps.py")
    else:
        (tmp_path / "my_steps.py").write_text(steps)


def test_a_lint_finding_in_the_step_module_fails_the_build_at_its_file_and_line(tmp_path):
    _spec_beside(tmp_path, BAD_STEP)
    for command in (["validate", "custom_step.yaml"], ["build", "custom_step.yaml", "--out", "out"]):
        result = tfgen_here(*command, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
        assert lines[0].startswith("my_steps.py:10:22: algorithm.step: TFG013 `model.losses` read outside"), lines[0]
    assert not (tmp_path / "out").exists()


def test_a_lint_clean_step_module_builds(tmp_path):
    _spec_beside(tmp_path, None)
    result = tfgen_here("build", "custom_step.yaml", "--out", "out", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "custom_step.py").is_file()


@pytest.mark.slow
def test_validate_deep_reports_a_lint_finding_in_the_step_module(tmp_path):
    _spec_beside(tmp_path, BAD_STEP)
    result = run_tfgen("validate", "--deep", "custom_step.yaml", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert "my_steps.py:10:22: algorithm.step: TFG013 " in result.stderr, result.stderr

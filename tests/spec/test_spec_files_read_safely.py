"""A spec path that is a FIFO (or an `extends` naming one) is one located line, never a hang."""

from __future__ import annotations

import os

import pytest
from conftest import run_tfgen


@pytest.mark.parametrize("command", ["validate", "build", "check", "diff"])
def test_a_fifo_spec_is_refused_without_waiting_for_a_writer(tmp_path, command):
    os.mkfifo(tmp_path / "spec.yaml")
    result = run_tfgen(command, "spec.yaml", cwd=tmp_path, timeout=60)
    assert result.returncode == 2
    assert result.stderr == "spec.yaml:1:1: cannot read the spec: it is a FIFO or a socket, not a file\n"


def test_an_extends_naming_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "base.yaml")
    (tmp_path / "spec.yaml").write_text("extends: base.yaml\nname: small\n")
    result = run_tfgen("validate", "spec.yaml", cwd=tmp_path, timeout=60)
    assert result.returncode == 2
    assert "base.yaml:1:1: cannot read the spec: it is a FIFO or a socket, not a file" in result.stderr

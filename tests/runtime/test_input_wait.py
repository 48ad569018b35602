"""The input-bound measurement (tfgen_runtime/input_wait.py) against a simulated pipeline on a
simulated clock: a producer that makes a batch every `period` seconds and a step that computes for
`compute` seconds, plus a fixed cost per call. Slow input is named in one line with its fraction;
fast input stays silent; the epoch's steps all run once, in order, whatever the measurement cuts."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import ROOT


def input_wait_module():
    """The runtime's input_wait.py on its own (it imports no TensorFlow)."""
    path = ROOT / "runtime" / "tfgen_runtime" / "input_wait.py"
    spec = importlib.util.spec_from_file_location("input_wait_alone", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


iw = input_wait_module()


class Clock:
    """`time` as the module uses it (perf_counter, sleep), on simulated seconds."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class Pipeline:
    """Batches ready every `period` s from the first request; each step computes `compute` s and
    each call costs `call` s more."""

    def __init__(self, clock, period, compute, call=0.0005):
        self.clock = clock
        self.period = period
        self.compute = compute
        self.call = call
        self.started = None
        self.taken = 0
        self.ran = []  # (epoch, step) of every step run
        self.calls = []  # steps per call

    def run_steps(self, epoch, step, steps):
        self.calls.append(steps)
        self.clock.now += self.call
        for offset in range(steps):
            if self.started is None:
                self.started = self.clock.now
            ready = self.started + (self.taken + 1) * self.period
            self.clock.now = max(self.clock.now, ready)  # waits for its batch
            self.taken += 1
            self.clock.now += self.compute
            self.ran.append((epoch, step + offset))


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(iw, "time", clock)
    return clock


def train(wait, epochs, steps_per_epoch, chunk, first_step=0):
    """Drive `wait.run` as the generated epoch loop does."""
    rows = []
    for epoch in range(1, epochs + 1):
        step = first_step if epoch == 1 else 0
        while step < steps_per_epoch:
            steps = min(chunk, steps_per_epoch - step)
            wait.run(epoch, step, steps)
            step += steps
        rows.append(wait.values())
    return rows


def test_slow_input_is_one_line_with_its_fraction_and_a_history_value(clock, capsys):
    pipeline = Pipeline(clock, period=0.01, compute=0.001)
    wait = iw.InputWait(pipeline.run_steps, 60, compiled=False)
    rows = train(wait, epochs=2, steps_per_epoch=60, chunk=25)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("input-bound: the steps waited for input ")
    assert "of epoch 1's time: try `cache: true`" in lines[0]
    assert "num_parallel_calls" in lines[0] and "`in_memory: true`" in lines[0]
    assert "a larger shuffle buffer does not help" in lines[0]
    # 9 of every 10 ms wait; a timed single step's call cost counts as compute: the estimate errs low.
    assert rows[0]["input_wait"] == pytest.approx(0.85, abs=0.01)
    assert rows[1] == {}


def test_fast_input_is_silent_and_records_nothing(clock, capsys):
    pipeline = Pipeline(clock, period=0.0, compute=0.004)
    wait = iw.InputWait(pipeline.run_steps, 60, compiled=False)
    rows = train(wait, epochs=2, steps_per_epoch=60, chunk=25)
    assert capsys.readouterr().out == ""
    assert rows == [{}, {}]
    assert wait.fraction == 0.0


@pytest.mark.parametrize("first_step", [0, 7], ids=["fresh", "resumed"])
def test_every_step_runs_once_in_order_whatever_the_calls(clock, first_step):
    pipeline = Pipeline(clock, period=0.0, compute=0.001)
    wait = iw.InputWait(pipeline.run_steps, 40, compiled=False)
    train(wait, epochs=3, steps_per_epoch=40, chunk=16, first_step=first_step)
    expected = [(1, s) for s in range(first_step, 40)] + [(e, s) for e in (2, 3) for s in range(40)]
    assert pipeline.ran == expected


def test_a_resumed_epoch_is_not_measured_the_next_whole_one_is(clock):
    pipeline = Pipeline(clock, period=0.0, compute=0.001)
    wait = iw.InputWait(pipeline.run_steps, 40, compiled=False)
    train(wait, epochs=2, steps_per_epoch=40, chunk=16, first_step=7)
    assert wait.epoch == 2 and wait.fraction is not None


def test_a_compiled_step_is_measured_after_the_epoch_that_compiled_it(clock):
    pipeline = Pipeline(clock, period=0.0, compute=0.001)
    wait = iw.InputWait(pipeline.run_steps, 40, compiled=True)
    train(wait, epochs=2, steps_per_epoch=40, chunk=16)
    assert wait.epoch == 2
    assert pipeline.calls[:3] == [16, 16, 8]  # the first epoch runs as it would unmeasured


def test_an_epoch_too_short_to_measure_is_not_measured(clock, capsys):
    pipeline = Pipeline(clock, period=0.01, compute=0.001)
    wait = iw.InputWait(pipeline.run_steps, 6 * iw.PAIRS - 1, compiled=False)
    rows = train(wait, epochs=2, steps_per_epoch=6 * iw.PAIRS - 1, chunk=100)
    assert wait.epoch is None and rows == [{}, {}]
    assert capsys.readouterr().out == ""

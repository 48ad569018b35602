"""The benchmark harness runs end to end at tiny sizes (the full run is not part of CI)."""

from __future__ import annotations

import contextlib
import itertools
import json
import shutil
import sys
import tempfile
import time

import pytest
from conftest import ROOT, load_module


@pytest.mark.slow
def test_benchmark_smoke_run_writes_results_and_report(tmp_path, monkeypatch):
    """The driver's main in this process (its workers are processes: the zygote forks them)."""
    if "matplotlib" in sys.modules and sys.modules["matplotlib"] is None:  # tests/train_env's block
        monkeypatch.delitem(sys.modules, "matplotlib")  # the driver draws docs/benchmarks.png
    results = tmp_path / "latest.json"
    docs = tmp_path / "docs"
    run = load_module(ROOT / "benchmarks" / "run.py")
    assert run.main(["--smoke", "--results", str(results), "--docs", str(docs)]) == 0
    rows = json.loads(results.read_text())
    assert {row["system"] for row in rows} == set(run.ALL_SYSTEMS)
    for row in rows:
        assert set(row) >= {
            "case",
            "system",
            "examples_per_second",
            "first_step_seconds",
            "peak_rss_mb",
            "rss_growth_mb",
        }
        assert row["examples_per_second"] > 0 and row["peak_rss_mb"] > 100
    report = (docs / "benchmarks.md").read_text()
    assert "| mlp | tfgen |" in report and "## Targets" in report and "## Build speed" in report
    (peers,) = [line for line in report.splitlines() if line.startswith("| mlp | ") and "x |" in line]
    assert "(input) |" in peers or "(compute) |" in peers  # a limit, and which bound it is
    assert (docs / "benchmarks.png").stat().st_size > 1000


@pytest.mark.slow
@pytest.mark.parametrize("case", ["image_folder", "csv"])
def test_a_file_case_trains_fit_on_keras_own_loader_over_the_cases_files(case):
    run = load_module(ROOT / "benchmarks" / "run.py")
    files = run.prepare(case, examples=192, epochs=2)  # the files, written by a process of their own
    try:
        (result,) = run.run_case(case, ["fit_tuned"], examples=192, epochs=2, timeout=600, files=files)
    finally:
        shutil.rmtree(files["data"])
    assert result["epochs"] == 2 and result["examples_per_second"] > 0


def test_targets_give_each_rounds_ratio_beside_the_ratio_of_the_medians():
    """Two rounds: each round pairs the two systems' runs of that round (the noise shows)."""
    run = load_module(ROOT / "benchmarks" / "run.py")
    tfgen = {"case": "mlp", "system": "tfgen", "epochs": 3, "examples_per_second": 90.0}
    tuned = {"case": "mlp", "system": "fit_tuned", "epochs": 3, "examples_per_second": 100.0}
    tfgen["rounds_examples_per_second"] = [60.0, 120.0]
    tuned["rounds_examples_per_second"] = [120.0, 80.0]
    (verdict,) = [v for v in run.evaluate([tfgen, tuned]) if "best fit" in v[0]]
    assert verdict[1:] == ("mlp", 0.9, False, [0.5, 1.5])
    one_round = {**tfgen, "rounds_examples_per_second": [90.0]}
    (verdict,) = [v for v in run.evaluate([one_round, tuned]) if "best fit" in v[0]]
    assert verdict[4] == []  # one round (or rounds that do not pair): no column to show


def recorded(case, system, speed, rounds=None):
    """A result row as the driver records it (examples/s, and each round's when it kept them)."""
    row = {"case": case, "system": system, "epochs": 4, "examples_per_second": speed}
    if rounds:
        row["rounds_examples_per_second"] = rounds
    return row


def test_the_peer_is_the_faster_of_default_and_tuned_fit_round_by_round():
    """Tuned fit slower than default fit (as `cnn` and `image_folder` measured): default is the peer."""
    run = load_module(ROOT / "benchmarks" / "run.py")
    results = [
        recorded("cnn", "fit_default", 700.0, [600.0, 800.0]),
        recorded("cnn", "fit_tuned", 200.0, [200.0, 200.0]),
        recorded("cnn", "tfgen", 770.0, [720.0, 800.0]),
    ]
    (best,) = [row for row in run.derived(results) if row["system"] == "best_fit"]
    assert (best["peer"], best["examples_per_second"]) == ("fit_default", 700.0)
    (verdict,) = [v for v in run.evaluate(results) if "best fit" in v[0]]
    assert verdict[1:] == ("cnn", 1.1, True, [1.2, 1.0])
    (line,) = [line for line in run.peer_lines(results) if line.startswith("| cnn |")]
    assert "| 770 | 700 | 200 | default | 1.10x | 1.20x, 1.00x |" in line


def test_the_limit_is_the_slower_of_input_alone_and_step_alone_and_names_its_bound():
    run = load_module(ROOT / "benchmarks" / "run.py")
    results = [
        recorded("image_folder", "tfgen", 900.0, [900.0, 900.0]),
        recorded("image_folder", "input_alone", 1000.0, [1000.0, 1500.0]),  # the slower: input bound
        recorded("image_folder", "step_alone", 2000.0, [2000.0, 1200.0]),  # slower in round 2
    ]
    (limit,) = [row for row in run.derived(results) if row["system"] == "limit"]
    assert (limit["examples_per_second"], limit["bound"]) == (1000.0, "input")
    assert limit["rounds_examples_per_second"] == [1000.0, 1200.0]  # each round's slower
    (verdict,) = [v for v in run.evaluate(results) if "limit" in v[0]]
    assert verdict[1:] == ("image_folder", 0.9, True, [0.9, 0.75])
    faster_input = [*results[:1], recorded("image_folder", "input_alone", 3000.0), results[2]]
    (limit,) = [row for row in run.derived(faster_input) if row["system"] == "limit"]
    assert (limit["examples_per_second"], limit["bound"]) == (2000.0, "compute")


def test_a_case_without_tuned_fit_or_a_bound_shows_a_dash_for_them():
    """A case whose systems are default fit and the loop (an algorithm's published override)."""
    run = load_module(ROOT / "benchmarks" / "run.py")
    results = [
        recorded("gan", "fit_default", 500.0),
        recorded("gan", "tfgen", 600.0),
        recorded("other", "tfgen", 600.0),
        recorded("other", "step_alone", 700.0),  # one bound alone makes no limit
    ]
    lines = run.peer_lines(results)
    (gan,) = [line for line in lines if line.startswith("| gan |")]
    assert gan == "| gan | 600 | 500 | - | default | 1.20x | - | - | - | - | - | - |"
    (other,) = [line for line in lines if line.startswith("| other |")]
    assert other == "| other | 600 | - | - | - | - | - | - | 700 | - | - | - |"
    assert {v[1] for v in run.evaluate(results) if "best fit" in v[0] or "limit" in v[0]} == {"gan"}


def test_the_scaling_table_gives_each_points_growth_from_1x_for_the_loop_and_the_faster_fit():
    run = load_module(ROOT / "benchmarks" / "run.py")

    def point(grows, factor, tfgen, default, tuned):
        seconds = {"tfgen": tfgen, "fit_default": default, "fit_tuned": tuned}
        best = min(("fit_default", "fit_tuned"), key=seconds.get)
        return {
            "grows": grows,
            "factor": factor,
            "examples": 1000 * factor,
            "parameters": 10,
            "seconds": seconds,
            "best_fit": best,
        }

    points = [point("data", 1, 1.0, 3.0, 2.0), point("data", 4, 4.0, 12.0, 6.0), point("model", 16, 8.0, 30.0, 40.0)]
    lines = run.growth_lines(points)
    assert lines[2] == "| data | 1x | 1,000 | 10 | 1.00 | 1.0x | 2.00 (tuned) | 1.0x |"
    assert lines[3] == "| data | 4x | 4,000 | 10 | 4.00 | 4.0x | 6.00 (tuned) | 3.0x |"
    # The model's growth is from the 1x point (the data's); its faster fit there was tuned.
    assert lines[4] == "| model | 16x | 16,000 | 10 | 8.00 | 8.0x | 30.00 (default) | 15.0x |"


# A worker of the lockstep tests: sets up for `setup` seconds, then takes a turn per epoch and
# records when each epoch ran (wall clock) and what its clock that leaves out the waits read;
# a thread of its own ticks all along (as a tf.data prefetch would work between epochs).
TURN_TAKER = """
import json, os, sys, threading, time
sys.path.insert(0, sys.argv[1])
import run
name, setup, epochs, fail = sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "fail"
ticks = []
def tick():
    while True:
        ticks.append(time.time())
        time.sleep(0.002)
threading.Thread(target=tick, daemon=True).start()
time.sleep(setup)
turns = run.Turns(os.environ[run.TURNS_ENV])
spans, begin = [], turns.clock()
for epoch in range(epochs):
    turns.take()
    started = time.time()
    time.sleep(0.05)
    spans.append([name, epoch, started, time.time()])
    if fail and epoch == 1:
        sys.exit("failed at epoch 1")
clocked = turns.clock() - begin
print(json.dumps({"system": name, "spans": spans, "clocked": clocked, "waited": turns.waited, "ticks": ticks}))
"""


def lockstep(tmp_path, workers):
    """Run `(name, setup seconds, epochs, "fail" or "ok")` turn takers in lockstep; their results."""
    run = load_module(ROOT / "benchmarks" / "run.py")
    with contextlib.ExitStack() as stack:
        started = []
        for index, (name, *settings) in enumerate(workers):
            command = [sys.executable, "-c", TURN_TAKER, str(ROOT / "benchmarks"), name, *map(str, settings)]
            outputs = [stack.enter_context(tempfile.TemporaryFile("w+")) for _ in range(2)]
            started.append(stack.enter_context(run.Worker(name, command, tmp_path / str(index), *outputs)))
        return run.run_in_lockstep(started, time.monotonic() + 60)


@pytest.mark.slow  # starts worker processes
def test_workers_set_up_together_then_take_turns_an_epoch_each_in_order(tmp_path):
    results = lockstep(tmp_path, [("a", 0.6, 3, "ok"), ("b", 0.0, 3, "ok"), ("c", 0.3, 2, "ok")])
    spans = sorted((span for result in results for span in result["spans"]), key=lambda span: span[2])
    assert [(name, epoch) for name, epoch, *_ in spans] == [
        ("a", 0),
        ("b", 0),
        ("c", 0),
        ("a", 1),
        ("b", 1),
        ("c", 1),
        ("a", 2),
        ("b", 2),
    ]
    for before, after in itertools.pairwise(spans):
        assert before[3] <= after[2]  # no epoch overlaps another worker's
    # A waiting worker is stopped: none of its threads ran in another's epoch.
    for result in results:
        others = [span for span in spans if span[0] != result["system"]]
        assert not [tick for tick in result["ticks"] for _, _, start, end in others if start < tick < end]
    # b waited through the others' epochs after its first; its clock stood still meanwhile.
    b = next(result for result in results if result["system"] == "b")
    others = sum(end - start for name, _, start, end in spans[2:] if name != "b")
    assert b["waited"] >= others >= 0.2
    assert 0.15 <= b["clocked"] < 0.15 + others


def test_a_failed_worker_is_named_with_its_error(tmp_path):
    with pytest.raises(RuntimeError, match=r"(?s)^bad failed:.*failed at epoch 1"):
        lockstep(tmp_path, [("good", 0.0, 3, "ok"), ("bad", 0.0, 3, "fail")])


@pytest.mark.slow
def test_a_published_case_times_the_keras_io_override_under_fit_and_the_generated_loop():
    """The `distillation` case's two systems, tiny, in lockstep: the keras.io Distiller under tuned
    `fit` (benchmarks/published_cases.py) and the script of the spec beside it."""
    run = load_module(ROOT / "benchmarks" / "run.py")
    results = run.run_case("distillation", ["fit_tuned", "tfgen"], examples=128, epochs=2, timeout=600, files={})
    assert [r["system"] for r in results] == ["fit_tuned", "tfgen"]
    for result in results:
        assert result["case"] == "distillation" and result["epochs"] == 2 and result["examples_per_second"] > 0

"""`tfgen launch` and `tfgen tf-config`: the launcher's own behaviour, with tiny worker scripts (no TensorFlow)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import ROOT, import_blocker

from tfgen.cli import main
from tfgen.cluster.launch import Group, say

# A worker that reports its TF_CONFIG, then does what argv[1] says.
TOY = """
# Stands in for a script of a multi_worker_mirrored spec (tf.distribute.MultiWorkerMirroredStrategy).
import json, os, signal, sys, time
config = json.loads(os.environ["TF_CONFIG"])
index, mode, folder = config["task"]["index"], sys.argv[1], sys.argv[2]
attempt = len(os.listdir(folder)) // len(config["cluster"]["worker"])
open(os.path.join(folder, f"{attempt}-{index}"), "w").write(os.environ["TF_CONFIG"])
print(f"worker {index} attempt {attempt}", flush=True)
print(f"a line on stderr from {index}", file=sys.stderr, flush=True)
if mode == "fail" and index == 1 and attempt < int(sys.argv[3]):
    time.sleep(0.5)
    sys.exit(3)
if mode == "interrupt":
    stubborn = index == 1 and sys.argv[3] == "stubborn"
    signal.signal(signal.SIGINT, signal.SIG_IGN if stubborn else lambda *a: sys.exit(print(f"saved {index}") or 130))
    print("ready", flush=True)
    time.sleep(60)
if mode == "fail" and index == 2:
    time.sleep(5)
print(f"finished {index}", flush=True)
"""


def test_tf_config_of_one_host(capsys):
    assert main(["tf-config", "--hosts", "h1:2222,h2:2222", "--index", "1"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "cluster": {"worker": ["h1:2222", "h2:2222"]},
        "task": {"type": "worker", "index": 1},
    }


@pytest.mark.parametrize(
    "argv, message",
    [
        (["tf-config", "--hosts", "h1:2222,h2", "--index", "0"], "--hosts: `h2` is not host:port"),
        (["tf-config", "--hosts", "h1:2222,h1:2222", "--index", "0"], "--hosts: an address appears twice"),
        (["tf-config", "--hosts", "h:1,h:01", "--index", "0"], "--hosts: an address appears twice (`h:01`)"),
        (["tf-config", "--hosts", "h:1,H:1", "--index", "0"], "--hosts: an address appears twice (`H:1`)"),
        (
            ["tf-config", "--hosts", "h:\u00b2", "--index", "0"],
            "--hosts: `h:\u00b2` is not host:port (ASCII digits for the port)",
        ),
        (["tf-config", "--hosts", "h:\uff11\uff12", "--index", "0"], "--hosts: `h:\uff11\uff12` is not host:port"),
        (["tf-config", "--hosts", "h:-1", "--index", "0"], "--hosts: `h:-1` is not host:port"),
        (["tf-config", "--hosts", "h:0", "--index", "0"], "--hosts: `h:0`: port 0 is not in 1..65535"),
        (["tf-config", "--hosts", "h:65536", "--index", "0"], "--hosts: `h:65536`: port 65536 is not in 1..65535"),
        (["tf-config", "--hosts", "h\nx:1", "--index", "0"], "--hosts: `'h\\nx:1'` is not host:port"),
        (["tf-config", "--hosts", "h x:1", "--index", "0"], "--hosts: `h x:1` is not host:port"),
        (["launch", "--hosts", "h:\u00b2,g:1", "--index", "0", "toy.py"], "--hosts: `h:\u00b2` is not host:port"),
        (["launch", "--workers", "2", "--grace", "nan", "toy.py"], "--max-restarts and --grace must not be negative"),
        (["tf-config", "--hosts", "h1:2222,h2:2222", "--index", "2"], "--index 2 is not in 0..1"),
        (["launch", "toy.py"], "give --workers N (this host) or --hosts"),
        (["launch", "--workers", "2", "--hosts", "h:1", "toy.py"], "give --workers N (this host) or --hosts"),
        (["launch", "--hosts", "h:1,g:2", "toy.py"], "--hosts needs --index I"),
        (["launch", "--workers", "0", "toy.py"], "--workers must be at least 1"),
        (
            ["launch", "--workers", "2", "--max-restarts", "-1", "toy.py"],
            "--max-restarts and --grace must not be negative",
        ),
        (["launch", "--workers", "2", "no_such_script.py"], "no_such_script.py: no such script"),
        (["launch", "--workers", "2", "generated/digits.py"], "generated/digits.py does not use multi_worker_mirrored"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(argv, message, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "hosts, expected",
    [
        ("h1:2222,h2:02222", ["h1:2222", "h2:2222"]),
        ("[::1]:2222, 10.0.0.2:65535", ["[::1]:2222", "10.0.0.2:65535"]),
    ],
)
def test_tf_config_holds_each_port_as_a_plain_number(hosts, expected, capsys):
    assert main(["tf-config", "--hosts", hosts, "--index", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["cluster"]["worker"] == expected


def _launch(tmp_path, *args, env=None):
    (tmp_path / "toy.py").write_text(TOY)
    (tmp_path / "seen").mkdir(exist_ok=True)
    return subprocess.Popen(
        [sys.executable, "-m", "tfgen", "launch", *args],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def _configs(tmp_path):
    return {p.name: json.loads(p.read_text()) for p in sorted((tmp_path / "seen").iterdir())}


@pytest.mark.slow
def test_three_workers_get_their_tf_config_and_prefixed_output_without_tensorflow(tmp_path):
    blocked = import_blocker(tmp_path / "block")
    launcher = _launch(
        tmp_path, "--workers", "3", str(tmp_path / "toy.py"), "--", "ok", str(tmp_path / "seen"), env=blocked
    )
    out, err = launcher.communicate(timeout=30)
    assert launcher.returncode == 0, err
    assert sorted(out.splitlines()) == sorted(
        [f"[{i}] worker {i} attempt 0" for i in range(3)] + [f"[{i}] finished {i}" for i in range(3)]
    )
    assert {f"[{i}] a line on stderr from {i}" for i in range(3)} <= set(err.splitlines())
    configs = _configs(tmp_path)
    cluster = configs["0-0"]["cluster"]["worker"]
    assert len(set(cluster)) == 3 and all(host.startswith("127.0.0.1:") for host in cluster)
    assert [configs[f"0-{i}"] for i in range(3)] == [
        {"cluster": {"worker": cluster}, "task": {"type": "worker", "index": i}} for i in range(3)
    ]


@pytest.mark.slow
def test_a_failure_stops_the_group_and_gives_the_workers_exit_code(tmp_path):
    launcher = _launch(tmp_path, "--workers", "3", str(tmp_path / "toy.py"), "--", "fail", str(tmp_path / "seen"), "1")
    out, err = launcher.communicate(timeout=30)
    assert launcher.returncode == 3
    assert "[0] finished 0" in out and "finished 1" not in out
    assert "finished 2" not in out  # worker 2 (sleeping) was stopped, not waited for
    assert "tfgen launch: worker 1 exited with 3; stopped the group (no restarts left)" in err


@pytest.mark.slow
def test_restarts_run_the_whole_group_again_on_fresh_ports(tmp_path):
    launcher = _launch(
        tmp_path,
        "--workers",
        "2",
        "--max-restarts",
        "2",
        str(tmp_path / "toy.py"),
        "--",
        "fail",
        str(tmp_path / "seen"),
        "2",
    )
    out, err = launcher.communicate(timeout=30)
    assert launcher.returncode == 0, err
    assert "restarting the group (1/2)" in err and "restarting the group (2/2)" in err
    assert "[1] worker 1 attempt 2" in out and "[1] finished 1" in out
    configs = _configs(tmp_path)
    assert sorted(configs) == [f"{a}-{i}" for a in range(3) for i in range(2)]
    clusters = {json.dumps(configs[f"{a}-0"]["cluster"]) for a in range(3)}
    assert len(clusters) == 3


@pytest.mark.slow
@pytest.mark.parametrize("stubborn", [False, True])
def test_sigint_to_the_launcher_reaches_every_worker_then_sigkill_after_the_grace(tmp_path, stubborn):
    launcher = _launch(
        tmp_path,
        "--workers",
        "2",
        "--grace",
        "1",
        str(tmp_path / "toy.py"),
        "--",
        "interrupt",
        str(tmp_path / "seen"),
        "stubborn" if stubborn else "polite",
    )
    ready = 0
    while ready < 2:
        ready += launcher.stdout.readline().endswith("ready\n")
    launcher.send_signal(signal.SIGINT)
    out, err = launcher.communicate(timeout=30)
    assert launcher.returncode == 130
    assert "SIGINT: asking every worker to save and stop (SIGINT to each, SIGKILL after 1 s)" in err
    assert "[0] saved 0" in out
    assert ("[1] saved 1" in out) != stubborn


@pytest.mark.slow
def test_the_multi_host_form_runs_one_worker_with_that_hosts_tf_config(tmp_path):
    hosts = "10.0.0.1:2222,10.0.0.2:2222"
    launcher = _launch(
        tmp_path, "--hosts", hosts, "--index", "1", str(tmp_path / "toy.py"), "--", "ok", str(tmp_path / "seen")
    )
    out, err = launcher.communicate(timeout=30)
    assert launcher.returncode == 0, err
    assert out.splitlines() == ["[1] worker 1 attempt 0", "[1] finished 1"]
    assert _configs(tmp_path) == {
        "0-1": {"cluster": {"worker": hosts.split(",")}, "task": {"type": "worker", "index": 1}}
    }


# A worker that starts a child which ignores SIGTERM and holds the worker's output open, then fails.
LEAVES_A_CHILD = """
import os, subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                          "print('child up', flush=True); time.sleep(300)"])
open(os.path.join(sys.argv[1], "child.pid"), "w").write(str(child.pid))
time.sleep(0.5)
sys.exit(3)
"""


def _gone(pid: int, seconds: float = 3.0) -> bool:
    """Whether `pid` has ended (or is a zombie) within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        state = subprocess.run(
            ["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True, check=False
        ).stdout.strip()
        if state in ("", "Z"):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def _kill(pids) -> None:
    """Cleanup before a failing assertion: end the processes this test started that still run."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_a_failed_workers_children_are_killed_and_the_launcher_returns_promptly(tmp_path):
    (tmp_path / "leaves.py").write_text(LEAVES_A_CHILD)
    started = time.monotonic()
    launcher = subprocess.Popen(
        [sys.executable, "-m", "tfgen", "launch", "--workers", "1", str(tmp_path / "leaves.py"), "--", str(tmp_path)],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = launcher.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        launcher.kill()
        out, err = "", "the launcher hung"
    child = int((tmp_path / "child.pid").read_text())
    gone = _gone(child)
    if not gone:
        _kill([child])
    assert launcher.returncode == 3, err
    assert time.monotonic() - started < 15
    assert "[0] child up" in out
    assert "tfgen launch: worker 0 exited with 3; stopped the group (no restarts left)" in err
    assert gone, f"the failed worker's child {child} still runs"


@pytest.mark.slow
def test_output_held_by_a_process_that_left_the_group_delays_the_launcher_a_few_seconds_at_most(tmp_path):
    (tmp_path / "escapes.py").write_text(
        LEAVES_A_CHILD.replace('time.sleep(300)"])', 'time.sleep(300)"], start_new_session=True)')
    )
    started = time.monotonic()
    launcher = subprocess.Popen(
        [sys.executable, "-m", "tfgen", "launch", "--workers", "1", str(tmp_path / "escapes.py"), "--", str(tmp_path)],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        err = launcher.communicate(timeout=20)[1]
    except subprocess.TimeoutExpired:
        launcher.kill()
        err = "the launcher hung"
    finally:
        _kill([int((tmp_path / "child.pid").read_text())])  # in its own session: nothing else ends it
    assert launcher.returncode == 3, err
    assert time.monotonic() - started < 15
    assert "a process outside the workers' groups still holds their output; not waiting for it" in err


# A worker that records which signal stopped it (its save path), then exits 128 + N as the scripts do.
RECORDS_ITS_STOP = """
# Stands in for a script of a multi_worker_mirrored spec (tf.distribute.MultiWorkerMirroredStrategy).
import json, os, signal, sys, time
index, folder = json.loads(os.environ["TF_CONFIG"])["task"]["index"], sys.argv[1]
def stop(number, frame):
    open(os.path.join(folder, f"{signal.Signals(number).name}-{index}"), "w").close()
    print(f"saved {index}", flush=True)
    sys.exit(128 + number)
signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
print("ready", flush=True)
time.sleep(60)
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    "received, forwarded",
    [
        (signal.SIGHUP, signal.SIGTERM),
        (signal.SIGQUIT, signal.SIGTERM),
        (signal.SIGTERM, signal.SIGTERM),
    ],
    ids=["SIGHUP", "SIGQUIT", "SIGTERM"],
)
def test_a_stop_signal_to_the_launcher_ends_the_workers_through_their_sigterm_save(tmp_path, received, forwarded):
    (tmp_path / "records.py").write_text(RECORDS_ITS_STOP)
    (tmp_path / "seen").mkdir()
    launcher = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tfgen",
            "launch",
            "--workers",
            "2",
            "--grace",
            "10",
            str(tmp_path / "records.py"),
            "--",
            str(tmp_path / "seen"),
        ],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    ready = 0
    while ready < 2:
        ready += launcher.stdout.readline().endswith("ready\n")
    launcher.send_signal(received)
    try:
        out, err = launcher.communicate(timeout=30)
    finally:
        launcher.kill()
    if launcher.returncode < 0:  # the signal killed the launcher: its workers run on, orphaned
        _kill(int(pid) for pid in re.findall(r"\(pid (\d+)\)", err))
    assert launcher.returncode == 128 + received, err
    assert sorted(os.listdir(tmp_path / "seen")) == [f"{forwarded.name}-0", f"{forwarded.name}-1"]
    assert "[0] saved 0" in out and "[1] saved 1" in out
    assert (
        f"{received.name}: asking every worker to save and stop ({forwarded.name} to each, SIGKILL after 10 s)" in err
    )


class SlowOutput(io.StringIO):
    """An output where each write takes a moment, as a busy terminal's may."""

    def write(self, text):
        time.sleep(0.0005)
        return super().write(text)


def test_the_launchers_own_lines_never_split_a_workers_line(monkeypatch):
    output = SlowOutput()
    monkeypatch.setattr(sys, "stderr", output)
    worker_lines = io.BytesIO(b"".join(b"a line on stderr from 0\n" for _ in range(200)))
    pump = threading.Thread(target=Group(command=[], hosts=[], indices=[]).copy, args=(0, worker_lines, output))
    pump.start()
    for number in range(200):
        say(f"message {number}")
    pump.join()
    lines = output.getvalue().splitlines()
    assert sorted(lines) == sorted(
        ["[0] a line on stderr from 0"] * 200 + [f"tfgen launch: message {n}" for n in range(200)]
    )

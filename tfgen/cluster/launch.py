"""`tfgen launch` and `tfgen tf-config`: run a generated script on several workers (no TensorFlow here).

TensorFlow has no `torchrun`: a `multi_worker_mirrored` script trains on the processes that
`TF_CONFIG` names, one `TF_CONFIG` per process. The launcher starts the processes of one host
with theirs, prefixes their output lines with the worker's index, stops the group when one
fails and restarts it (each run resumes from the chief's checkpoint), and forwards Ctrl-C and stop
signals (SIGTERM, SIGHUP, SIGQUIT) so the workers save before they exit.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tfgen.errors import UsageError
from tfgen.processes import kill_group

# One line at a time on our output: the workers' lines (copied by a thread per stream) and the
# launcher's own (`say`; print writes a line's text and its end apart, and another thread's line
# fell between them).
OUTPUT_LOCK = threading.Lock()

POLL_SECONDS = 0.1
PUMP_SECONDS = 5.0  # how long a stopped group's output may take to drain (a process outside it may hold it)
# What the launcher forwards for each signal it stops on: Ctrl-C as Ctrl-C; a stop request (SIGTERM),
# a dropped session (SIGHUP) or SIGQUIT as SIGTERM, which the workers save on (SIGHUP and SIGQUIT kill them).
FORWARD = {
    signal.SIGINT: signal.SIGINT,
    signal.SIGTERM: signal.SIGTERM,
    signal.SIGHUP: signal.SIGTERM,
    signal.SIGQUIT: signal.SIGTERM,
}
PORT = re.compile(r"[0-9]+")  # ASCII digits only: str.isdigit() also takes `²` and full-width digits
HOST = re.compile(r"[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]")  # a name, an IPv4 or a bracketed IPv6 address


def free_ports(count: int) -> list[int]:
    """`count` distinct ports that are free on localhost now (held open together, then released)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def parse_hosts(text: str) -> list[str]:
    """`h1:port,h2:port` as a list of `host:port` (the port as a plain number), or UsageError naming
    the entry that is not `host:port` or repeats an earlier one (`h:1` and `H:01` are one address)."""
    hosts, seen = [], set()
    for entry in (entry.strip() for entry in text.split(",")):
        host, _, port = entry.rpartition(":")
        shown = entry if entry.isprintable() else ascii(entry)
        if not HOST.fullmatch(host) or not PORT.fullmatch(port):
            raise UsageError(f"--hosts: `{shown}` is not host:port (ASCII digits for the port)")
        if not 1 <= int(port) <= 65535:
            raise UsageError(f"--hosts: `{shown}`: port {int(port)} is not in 1..65535")
        address = f"{host}:{int(port)}"
        if address.lower() in seen:
            raise UsageError(f"--hosts: an address appears twice (`{shown}`)")
        seen.add(address.lower())
        hosts.append(address)
    return hosts


def tf_config(hosts: list[str], index: int) -> str:
    """The TF_CONFIG of worker `index` of a cluster of `hosts` (worker 0 is the chief)."""
    if not 0 <= index < len(hosts):
        raise UsageError(f"--index {index} is not in 0..{len(hosts) - 1} (one per --hosts entry)")
    return json.dumps({"cluster": {"worker": hosts}, "task": {"type": "worker", "index": index}})


def exit_code(returncode: int) -> int:
    """A process's exit status as a shell reports it: 128 + N when signal N ended it."""
    return 128 - returncode if returncode < 0 else returncode


def describe(returncode: int) -> str:
    if returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with {returncode}"


@dataclass
class Group:
    """The local workers of one attempt: their processes and the threads copying their output."""

    command: list[str]
    hosts: list[str]
    indices: list[int]
    processes: dict[int, subprocess.Popen] = field(default_factory=dict)
    pumps: list[threading.Thread] = field(default_factory=list)

    def start(self) -> None:
        for index in self.indices:
            env = {**os.environ, "TF_CONFIG": tf_config(self.hosts, index), "PYTHONUNBUFFERED": "1"}
            # Its own session: a terminal's Ctrl-C reaches the launcher alone, which forwards it.
            process = subprocess.Popen(
                self.command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
            )
            self.processes[index] = process
            say(f"started worker {index} of {len(self.hosts)} at {self.hosts[index]} (pid {process.pid})")
            for stream, sink in ((process.stdout, sys.stdout), (process.stderr, sys.stderr)):
                pump = threading.Thread(target=self.copy, args=(index, stream, sink), daemon=True)
                pump.start()
                self.pumps.append(pump)

    def copy(self, index: int, stream, sink) -> None:
        """Copy a worker's output to ours, line by line, each line prefixed with `[index] `."""
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            with OUTPUT_LOCK:
                try:
                    sink.write(f"[{index}] {line}\n")
                    sink.flush()
                except (OSError, ValueError):  # our terminal is gone (SIGHUP): keep draining the worker
                    pass
        stream.close()

    def failure(self) -> tuple[int, int] | None:
        """(index, returncode) of the first worker seen to fail, if any."""
        for index, process in self.processes.items():
            if process.poll() not in (None, 0):
                return index, process.returncode
        return None

    def running(self) -> bool:
        return any(process.poll() is None for process in self.processes.values())

    def signal(self, number: int) -> None:
        """Signal every worker's process group (as a terminal would: its children too, also after
        the worker itself exited)."""
        for process in self.processes.values():
            kill_group(process, number)

    def stop(self, grace: float) -> None:
        """Wait up to `grace` seconds for the workers to exit, then SIGKILL what is left of their
        groups; drain their output (for PUMP_SECONDS at most: a process that left the group may hold it)."""
        deadline = time.monotonic() + grace
        while self.running() and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        self.signal(signal.SIGKILL)
        for process in self.processes.values():
            process.wait()
        deadline = time.monotonic() + PUMP_SECONDS
        for pump in self.pumps:
            pump.join(timeout=max(0.0, deadline - time.monotonic()))
        if any(pump.is_alive() for pump in self.pumps):
            say("a process outside the workers' groups still holds their output; not waiting for it")


class Interrupts:
    """SIGINT, SIGTERM, SIGHUP and SIGQUIT to the launcher: noted, so the group is stopped cleanly."""

    def __enter__(self):
        self.received: list[int] = []
        self.previous = {s: signal.signal(s, self.note) for s in FORWARD}
        return self

    def note(self, number: int, frame) -> None:
        self.received.append(number)

    def __exit__(self, *exc) -> None:
        for number, handler in self.previous.items():
            signal.signal(number, handler)


def say(message: str) -> None:
    # Our terminal may be gone (SIGHUP): the workers still need stopping.
    with OUTPUT_LOCK, contextlib.suppress(OSError, ValueError):
        print(f"tfgen launch: {message}", file=sys.stderr, flush=True)


def launch(
    script: Path,
    args: list[str],
    hosts: list[str],
    indices: list[int],
    max_restarts: int = 0,
    grace: float = 30.0,
    fresh_ports: bool = False,
) -> int:
    """Run the workers `indices` of the cluster `hosts`; restart the group after a failure.

    Returns 0 when every worker exits 0, else the exit code of the worker that failed (or
    128 + N after signal N to the launcher). `fresh_ports`: new localhost ports per attempt.
    """
    if not script.is_file():
        raise UsageError(f"{script}: no such script")
    if len(hosts) > 1 and "MultiWorkerMirroredStrategy" not in script.read_text(encoding="utf-8", errors="replace"):
        raise UsageError(f"{script} does not use multi_worker_mirrored: its workers would train separately")
    command = [sys.executable, str(script), *args]
    attempt = 0
    with Interrupts() as interrupts:
        while True:
            if fresh_ports and attempt:
                hosts = [f"127.0.0.1:{port}" for port in free_ports(len(hosts))]
            group = Group(command, hosts, indices)
            group.start()
            failed = wait(group, interrupts, grace)
            if interrupts.received:
                return 128 + interrupts.received[0]
            if failed is None:
                return 0
            index, returncode = failed
            if attempt == max_restarts:
                say(f"worker {index} {describe(returncode)}; stopped the group (no restarts left)")
                return exit_code(returncode)
            attempt += 1
            say(
                f"worker {index} {describe(returncode)}; restarting the group ({attempt}/{max_restarts}), "
                "resuming from the last checkpoint"
            )


def wait(group: Group, interrupts: Interrupts, grace: float) -> tuple[int, int] | None:
    """Watch the group until all exit 0, one fails, or the launcher is interrupted."""
    while group.running():
        if interrupts.received:
            # Every worker notes the signal and, at the next step boundary, they save together and exit.
            received = signal.Signals(interrupts.received[0])
            forwarded = FORWARD[received]
            say(
                f"{received.name}: asking every worker to save and stop ({forwarded.name} to each, "
                f"SIGKILL after {grace:g} s)"
            )
            group.signal(forwarded)
            group.stop(grace)
            return None
        failed = group.failure()
        if failed:
            # The others cannot save without it (a multi-worker save is collective): kill them;
            # the restarted group resumes from the last checkpoint.
            group.signal(signal.SIGKILL)
            group.stop(0)
            return failed
        time.sleep(POLL_SECONDS)
    group.stop(0)
    return group.failure()


def run(args) -> int:
    """`tfgen launch` from its parsed arguments."""
    script_args = args.args[1:] if args.args[:1] == ["--"] else args.args
    if args.max_restarts < 0 or not args.grace >= 0:  # not >=: NaN too
        raise UsageError("--max-restarts and --grace must not be negative")
    if (args.workers is None) == (args.hosts is None):
        raise UsageError("give --workers N (this host) or --hosts H:P,... with --index I (one host of many)")
    if args.workers is not None:
        if args.index is not None:
            raise UsageError("--index is for --hosts")
        if args.workers < 1:
            raise UsageError("--workers must be at least 1")
        hosts = [f"127.0.0.1:{port}" for port in free_ports(args.workers)]
        return launch(
            args.script, script_args, hosts, list(range(args.workers)), args.max_restarts, args.grace, fresh_ports=True
        )
    if args.index is None:
        raise UsageError("--hosts needs --index I: which of them this host is")
    hosts = parse_hosts(args.hosts)
    tf_config(hosts, args.index)  # checks the index
    return launch(args.script, script_args, hosts, [args.index], args.max_restarts, args.grace)


def run_tf_config(args) -> int:
    """`tfgen tf-config`: print one worker's TF_CONFIG."""
    print(tf_config(parse_hosts(args.hosts), args.index))
    return 0


def add_parsers(commands) -> None:
    launch = commands.add_parser("launch", help="run a multi_worker_mirrored script on N local workers (or one host)")
    launch.add_argument("--workers", type=int, metavar="N", help="start N workers on this host")
    launch.add_argument("--hosts", metavar="H:P,...", help="every worker's host:port (one per host), with --index")
    launch.add_argument("--index", type=int, metavar="I", help="with --hosts: this host's place in the list")
    launch.add_argument(
        "--max-restarts",
        type=int,
        default=0,
        metavar="K",
        help="restart the group after a failure up to K times (default 0)",
    )
    launch.add_argument(
        "--grace",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds the workers get to save after Ctrl-C or a stop signal before SIGKILL (default 30)",
    )
    launch.add_argument("script", type=Path, metavar="SCRIPT", help="the generated script")
    launch.add_argument("args", nargs=argparse.REMAINDER, metavar="-- ARGS", help="the script's options")
    config = commands.add_parser("tf-config", help="print the TF_CONFIG of one worker of a host list")
    config.add_argument("--hosts", required=True, metavar="H:P,...", help="every worker's host:port")
    config.add_argument("--index", required=True, type=int, metavar="I", help="this worker's place in the list")

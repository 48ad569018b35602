"""Start the tests' Python processes from a warm interpreter: a zygote that has imported
TensorFlow, Keras and NumPy forks each of them.

Most slow tests run a generated script in a process of its own (train, kill, resume), and each
such process spent 5-7 CPU-seconds importing TensorFlow and Keras before its first line of
training: more than half of the whole suite's CPU time. Here `python script.py ARGS` (or
`python -c CODE ARGS`) started through `subprocess` is served by a zygote instead: a Python
process that imported the training stack once (and nothing of this project), and forks a child
per command. The child is a real process with its own pid, the command's argv, working
directory, environment, umask, session and standard streams; it runs the script as `__main__`,
exits with the script's exit code (or dies by the signal that killed it), and can be signalled
and killed like any other. What it does not do is start a fresh interpreter, so a command is
served only where a fresh one would make no difference:

- the program is this interpreter (`sys.executable`) running a `.py` file or `-c` code, with no
  interpreter option, no `preexec_fn`, user or group change, `pass_fds` or `close_fds=False`;
- its environment agrees with the zygote's on everything read while Python starts or TensorFlow
  and Keras import (`PYTHON*`, `TF_*` but `TF_CONFIG`, `KERAS*`, `OMP_*`, `MKL*`,
  `XLA*`, `LD_*`, `LC_*`, `LANG*`, `TZ`, `HOME`), and sets `TF_CPP_MIN_LOG_LEVEL` (a script sets it before its import
  when it is missing): each such environment has a zygote of its own, started the second time
  one is asked for (at most MOST_ZYGOTES a test process); an environment whose zygote cannot
  import the stack (a test that blocks an import) is always served by a fresh interpreter.

`python -m ...` (tfgen's own command line, pip) always starts a fresh interpreter, so the tests
of what a command imports see a clean one. `TFGEN_TESTS_FRESH_INTERPRETERS=1` turns the zygotes
off: every process then starts as it would without them.
"""

from __future__ import annotations

import builtins
import contextlib
import inspect
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import types

MOST_ZYGOTES = 6  # about 0.5 GB each; the suite asks for 4-5 environments
# Variables read while Python starts or TensorFlow and Keras import: a child gets the zygote's.
IMPORT_TIME_PREFIXES = ("PYTHON", "TF_", "KERAS", "OMP_", "MKL", "XLA", "LD_", "LC_", "LANG", "TZ")
# Read in the child: when a strategy is made, and when TensorFlow first looks for a GPU.
RUN_TIME_VARIABLES = ("TF_CONFIG",)
PRELOADED = ("numpy", "tensorflow", "keras")
HEADER = struct.Struct("!I")


def import_time_environment(env: dict) -> tuple:
    """The part of `env` a zygote fixes at its start."""
    kept = [
        (name, value)
        for name, value in env.items()
        if (name.startswith(IMPORT_TIME_PREFIXES) and name not in RUN_TIME_VARIABLES) or name == "HOME"
    ]
    return tuple(sorted(kept))


# --- the client: in the test process ---------------------------------------------------------


class Zygote:
    """One zygote process (started with `original_popen`) and its control socket."""

    def __init__(self, env: dict, original_popen):
        self.lock = threading.Lock()
        ours, theirs = socket.socketpair()
        self.process = original_popen(
            [sys.executable, __file__, str(theirs.fileno())],
            env=env,
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
        )
        theirs.close()
        self.control = ours
        ready = self.control.recv(16)  # b"ready", or nothing when it could not import the stack
        self.ready = ready == b"ready"
        if not self.ready:
            self.process.wait()

    def spawn(self, request: dict, fds: list[int]) -> tuple[int, socket.socket]:
        """Fork a child for `request` with `fds` as its standard streams: its pid, and the
        socket its wait status arrives on."""
        status, child_end = socket.socketpair()
        body = json.dumps(request).encode()
        with self.lock:
            socket.send_fds(self.control, [HEADER.pack(len(body)) + body], [*fds, child_end.fileno()])
        child_end.close()
        line = read_line(status)
        if not line:
            status.close()
            raise OSError("the zygote ended before forking the child")
        return int(line), status

    def close(self) -> None:
        self.control.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def read_line(sock: socket.socket) -> bytes:
    """Bytes up to a newline (or the end)."""
    data = b""
    while not data.endswith(b"\n"):
        part = sock.recv(64)
        if not part:
            break
        data += part
    return data.strip()


class Zygotes:
    """The zygotes of one test process, by import-time environment."""

    def __init__(self, original_popen):
        self.original_popen = original_popen
        self.zygotes: dict[tuple, Zygote] = {}
        self.asked: dict[tuple, int] = {}
        self.refused: set[tuple] = set()
        self.lock = threading.Lock()

    def for_environment(self, env: dict) -> Zygote | None:
        """The zygote for `env`'s import-time environment, started on the second request."""
        key = import_time_environment(env)
        with self.lock:
            if key in self.zygotes:
                return self.zygotes[key]
            if key in self.refused or len(self.zygotes) >= MOST_ZYGOTES:
                return None
            self.asked[key] = self.asked.get(key, 0) + 1
            if self.asked[key] < 2:
                return None
            zygote = Zygote(env, self.original_popen)
            if not zygote.ready:
                self.refused.add(key)
                return None
            self.zygotes[key] = zygote
            return zygote

    def close(self) -> None:
        for zygote in self.zygotes.values():
            zygote.close()
        self.zygotes.clear()


ZYGOTES: Zygotes | None = None


# The arguments Popen passes to _execute_child, by name (they vary across Python versions).
EXECUTE_CHILD = list(inspect.signature(subprocess.Popen._execute_child).parameters)[1:]


def servable(call: dict) -> bool:
    """Whether a Popen call is `python script.py ...` or `python -c CODE ...` with nothing a
    forked child could not do as exec would."""
    if call["shell"] or call["executable"] or call["preexec_fn"] or not call["close_fds"] or call["pass_fds"]:
        return False
    if any(call[name] is not None for name in ("gid", "gids", "uid")):
        return False
    args = call["args"]
    if isinstance(args, (str, bytes, os.PathLike)) or len(args) < 2:
        return False
    program, first = (os.fsdecode(a) for a in args[:2])
    if program != sys.executable:
        return False
    if first == "-c":
        return len(args) >= 3
    return first.endswith(".py") and os.path.isfile(first)


class ZygotePopen(subprocess.Popen):
    """subprocess.Popen whose servable commands a zygote forks (see the module's docstring)."""

    _zygote_served = False  # forked by a zygote: its status comes through _zygote_status
    _zygote_status: socket.socket | None = None

    def _execute_child(self, *arguments):
        call = dict(zip(EXECUTE_CHILD, arguments, strict=True))
        environment = dict(os.environ if call["env"] is None else call["env"])
        zygote = None
        if ZYGOTES is not None and "TF_CPP_MIN_LOG_LEVEL" in environment and servable(call):
            zygote = ZYGOTES.for_environment(environment)
        if zygote is None:
            super()._execute_child(*arguments)
            return
        request = {
            "argv": [os.fsdecode(a) for a in call["args"]],
            "cwd": os.getcwd() if call["cwd"] is None else os.fsdecode(call["cwd"]),
            "env": {os.fsdecode(k): os.fsdecode(v) for k, v in environment.items()},
            "umask": call["umask"],
            "new_session": bool(call["start_new_session"]),
            "process_group": call.get("process_group", -1),
        }
        # The child's ends of its pipes; -1: the stream this process has.
        streams = [call["p2cread"], call["c2pwrite"], call["errwrite"]]
        fds = [target if fd == -1 else fd for target, fd in enumerate(streams)]
        self.pid, self._zygote_status = zygote.spawn(request, fds)
        self._zygote_served = True
        self._child_created = True
        pipes = ("p2cread", "p2cwrite", "c2pread", "c2pwrite", "errread", "errwrite")
        self._close_pipe_fds(*(call[name] for name in pipes))

    def _zygote_collect(self, timeout: float | None) -> bool:
        """Read the child's wait status if it arrives within `timeout`; whether it did."""
        status = self._zygote_status
        if status is None:
            return True
        readable, _, _ = select.select([status], [], [], timeout)
        if not readable:
            return False
        line = read_line(status)
        status.close()
        self._zygote_status = None
        if line:
            self._handle_exitstatus(int(line))
        elif self.returncode is None:
            self.returncode = 255  # the zygote died: the status is lost
        return True

    def _internal_poll(self, *args, **kwargs):
        if not self._zygote_served:
            return super()._internal_poll(*args, **kwargs)
        self._zygote_collect(0)
        return self.returncode

    def _wait(self, timeout):
        if not self._zygote_served:
            return super()._wait(timeout)
        if not self._zygote_collect(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode


def install() -> None:
    """Serve the test process's servable Python commands from zygotes (until `uninstall`)."""
    global ZYGOTES
    if os.environ.get("TFGEN_TESTS_FRESH_INTERPRETERS") == "1" or ZYGOTES is not None:
        return
    ZYGOTES = Zygotes(subprocess.Popen)
    subprocess.Popen = ZygotePopen


def uninstall() -> None:
    global ZYGOTES
    if ZYGOTES is None:
        return
    subprocess.Popen = ZYGOTES.original_popen
    ZYGOTES.close()
    ZYGOTES = None


# --- the server: the zygote process ----------------------------------------------------------


def serve(control: socket.socket) -> None:
    """Fork a child per request; send each child's wait status when it ends."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    while True:
        readable, _, _ = select.select([control, wake_read], [], [])
        if wake_read in readable:
            os.read(wake_read, 4096)
            reap(children)
        if control in readable:
            request = receive(control)
            if request is None:  # the test process has gone: so do its children
                for pid in children:
                    os.kill(pid, signal.SIGKILL)
                return
            body, fds = request
            pid = os.fork()
            if pid == 0:
                zygote_fds = [control.fileno(), wake_read, wake_write] + [s.fileno() for s in children.values()]
                run_child(json.loads(body), fds, zygote_fds)  # never returns
            for fd in fds[:3]:
                if fd > 2:
                    os.close(fd)
            status = socket.socket(fileno=fds[3])
            status.sendall(b"%d\n" % pid)
            children[pid] = status
            reap(children)


def receive(control: socket.socket) -> tuple[bytes, list[int]] | None:
    """One request: its JSON body and the four descriptors sent with it (None at the end)."""
    data, fds, _, _ = socket.recv_fds(control, 1 << 20, 4)
    if not data:
        return None
    (size,) = HEADER.unpack(data[: HEADER.size])
    body = data[HEADER.size :]
    while len(body) < size:
        part = control.recv(size - len(body))
        if not part:
            return None
        body += part
    return body, fds


def reap(children: dict[int, socket.socket]) -> None:
    """Send the wait status of every child that has ended."""
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        channel = children.pop(pid, None)
        if channel is not None:
            with contextlib.suppress(OSError):  # the test process has stopped listening
                channel.sendall(b"%d\n" % status)
            channel.close()


def run_child(request: dict, fds: list[int], zygote_fds: list[int]) -> None:
    """In the forked child: become the requested process, run it, exit with its code."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for fd in zygote_fds:
        os.close(fd)
    os.close(fds[3])
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    for fd in set(fds[:3]):
        if fd > 2:
            os.close(fd)
    if request["new_session"]:
        os.setsid()
    elif request["process_group"] not in (-1, None):
        os.setpgid(0, request["process_group"])
    if request["umask"] not in (-1, None):
        os.umask(request["umask"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # TensorFlow's import asked for it: find it again under this TMPDIR
    argv = request["argv"][1:]
    main = types.ModuleType("__main__")  # as Python makes it for a script or -c
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    if argv[0] == "-c":
        sys.argv = ["-c", *argv[2:]]
        sys.path[0] = ""
        source, filename = argv[1], "<string>"
    else:
        sys.argv = argv
        filename = os.path.abspath(argv[0])
        sys.path[0] = os.path.dirname(os.path.realpath(argv[0]))
        main.__file__ = filename
        with open(filename, "rb") as file:
            source = file.read()
    code = 0
    try:
        exec(compile(source, filename, "exec"), main.__dict__)  # noqa: S102 - what `python` does
    except SystemExit as exit_:
        code = exit_code(exit_)
    except KeyboardInterrupt as error:
        report(error)
        finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # as Python: die by the signal
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException as error:  # noqa: BLE001 - as the interpreter: any uncaught error exits 1
        report(error)
        code = 1
    os._exit(finish(code))


def report(error: BaseException) -> None:
    """Print an uncaught exception's traceback as Python does, from the program's first frame."""
    error = error.with_traceback(error.__traceback__.tb_next)
    sys.excepthook(type(error), error, error.__traceback__)


def exit_code(exit_: SystemExit) -> int:
    """The process exit code of a SystemExit, as Python gives it."""
    if exit_.code is None:
        return 0
    if isinstance(exit_.code, int):
        return exit_.code & 0xFF
    print(exit_.code, file=sys.stderr)
    return 1


def finish(code: int = 0) -> int:
    """What Python does before it exits: wait for threads, run atexit, flush the streams."""
    import atexit

    with contextlib.suppress(Exception):  # as the interpreter: go on to exit
        threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: Python exits 120
            code = code or 120
    return code


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    try:
        for name in PRELOADED:
            __import__(name)
    except BaseException:  # noqa: BLE001 - a blocked import: no zygote for this environment
        control.close()
        return
    sys.stdout.flush()
    sys.stderr.flush()
    control.sendall(b"ready")
    serve(control)


if __name__ == "__main__":
    main()

"""Learner children forked from one process that has imported JAX, instead of each importing it.

Importing jax, optax and flax costs a fresh Python about 2 CPU-seconds. A grader starts
about 40 children per submission of the whole course, so that alone was a third of a
submission's CPU time. A `Zygote` imports them once and forks each child from that state.

Two sides, one file:

- The zygote process (`python -I zygote.py FD`, run by the grading worker): trusted, outside
  any sandbox, started with the environment a sandboxed child gets (`isolation.child_env`),
  never holding anything of a learner's. It imports the libraries (no backend started, so no
  thread of XLA's exists to be lost in a fork), then serves the worker over a Unix socket:
  "fork" with four descriptors (the child's stdin, stdout, stderr, and a pipe its configuration
  arrives on) answers with the new process's pid; "kill" ends that process's group; "release"
  reaps it. It reports each child's end, and reaps only once the worker releases it, so a pid
  the worker kills is never one the system has handed to someone else.
- The forked process does what `launcher.py` does for a fresh child, from its first step: it
  reads its configuration (never seen by the zygote, so nothing of one learner stays in a
  process the next learner is forked from), becomes a new session, unshares its namespaces,
  builds the sandbox's root and forks the payload. The payload drops to the learner's uid,
  drops every capability (a fresh child loses them in `execve`; this one never execs) and sets
  `no_new_privs`, then runs `child.main` with the libraries already in memory. Everything a
  fresh child is denied, this one is denied too: the sandbox is built the same way, per child.

Only the `unshare` tier forks this way (bubblewrap builds its sandbox in a program of its own,
which must exec), and only for children whose environment is the zygote's, but for variables
read after the fork (`FORKABLE_ENV`). Anything else starts as before (`LearnerProcess`).
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import json
import select
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

ZYGOTE_SCRIPT = Path(__file__).resolve()
_BOOT = """import sys
sys.path.insert(0, {root!r})
from course.engine import zygote
zygote.main(sys.argv[1:])
"""
PID = struct.Struct("!i")
EXIT = struct.Struct("!ii")
# Read only once the child runs (XLA_FLAGS when its backend starts, the preload list in
# `child._preload`): a child may differ from the zygote in these and still be forked.
FORKABLE_ENV = ("XLA_FLAGS", "JAXLINGS_PRELOAD")
READY_TIMEOUT = 120.0


# -- the worker's side -------------------------------------------------------------


class ZygoteGone(Exception):
    """The zygote cannot fork (it died, or never became ready): start the child afresh."""


class Zygote:
    def __init__(self, env: dict[str, str], python: str = sys.executable) -> None:
        self.env = dict(env)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            # The script comes on stdin: a forked child's /proc/self/cmdline is the zygote's,
            # and should name no folder of the host's ("python -I - FD").
            self.proc = subprocess.Popen(
                [python, "-I", "-", str(theirs.fileno())],
                pass_fds=[theirs.fileno()], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=self.env, start_new_session=True, cwd="/",
            )
            try:
                self.proc.stdin.write(_BOOT.format(root=str(ZYGOTE_SCRIPT.parents[2])).encode())
                self.proc.stdin.close()
            except OSError:
                pass  # it died at once: wait_ready says so
        finally:
            theirs.close()
        self._sock = ours
        self._send_lock = threading.Lock()
        self._fork_lock = threading.Lock()  # one fork at a time: its answer is the next "P"
        self._state = threading.Condition()
        self._ready = False
        self._gone = False
        self._forked: list[int | str] = []
        self._exits: dict[int, int] = {}
        self._reader = threading.Thread(target=self._read, name="jaxlings-zygote", daemon=True)
        self._reader.start()

    def accepts(self, env: dict[str, str], argv_prefix: tuple = ()) -> bool:
        if argv_prefix or self._gone:
            return False
        keys = (set(env) | set(self.env)) - set(FORKABLE_ENV)
        return all(env.get(k) == self.env.get(k) for k in keys)

    def _read(self) -> None:
        try:
            while True:
                msg = self._sock.recv(64)
                if not msg:
                    break
                with self._state:
                    kind, body = msg[:1], msg[1:]
                    if kind == b"Y":
                        self._ready = True
                    elif kind == b"P":
                        self._forked.append(PID.unpack(body)[0])
                    elif kind == b"E":
                        self._forked.append(body.decode(errors="replace"))
                    elif kind == b"X":
                        pid, code = EXIT.unpack(body)
                        self._exits[pid] = code
                    self._state.notify_all()
        except OSError:
            pass
        with self._state:
            self._gone = True
            self._state.notify_all()

    def _send(self, data: bytes, fds: list[int] = ()) -> None:
        with self._send_lock:
            try:
                if fds:
                    socket.send_fds(self._sock, [data], list(fds))
                else:
                    self._sock.send(data)
            except OSError as e:
                raise ZygoteGone(f"the zygote is gone: {e}") from None

    def wait_ready(self, timeout: float = READY_TIMEOUT) -> bool:
        with self._state:
            self._state.wait_for(lambda: self._ready or self._gone, timeout)
            return self._ready and not self._gone

    def spawn(self, launcher_args: list[str], env: dict[str, str], cwd: str) -> "ForkedProcess":
        """A sandboxed child: `launcher_args` are `launcher.py`'s own (its config, "--", the
        child's command line), `env` and `cwd` what the launcher would have been started with."""
        if not self.wait_ready():
            raise ZygoteGone("the zygote did not start")
        config = json.dumps({"args": launcher_args, "env": env, "cwd": cwd}).encode()
        pipes = [os.pipe() for _ in range(4)]  # stdin, stdout, stderr, config
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][0]]
        try:
            with self._fork_lock:
                self._send(b"F", theirs)
                with self._state:
                    self._state.wait_for(lambda: self._forked or self._gone, 30)
                    answer = self._forked.pop(0) if self._forked else None
        except BaseException:
            for r, w in pipes:
                os.close(r)
                os.close(w)
            raise
        for fd in theirs:
            os.close(fd)
        if not isinstance(answer, int):
            for fd in (pipes[0][1], pipes[1][0], pipes[2][0], pipes[3][1]):
                os.close(fd)
            self._gone = self._gone or answer is None
            raise ZygoteGone(f"the zygote could not fork: {answer or 'no answer'}")
        try:  # the config is far below a pipe's buffer, and the child reads it first
            view = memoryview(config)
            while view:
                view = view[os.write(pipes[3][1], view):]
        except OSError:
            pass  # the child died at once: its end is reported like any other
        finally:
            os.close(pipes[3][1])
        return ForkedProcess(self, answer, stdin=os.fdopen(pipes[0][1], "wb", buffering=0),
                             stdout=os.fdopen(pipes[1][0], "rb", buffering=0),
                             stderr=os.fdopen(pipes[2][0], "rb", buffering=0))

    def returncode(self, pid: int) -> int | None:
        with self._state:
            return self._exits.get(pid)

    def wait(self, pid: int, timeout: float | None) -> int | None:
        with self._state:
            self._state.wait_for(lambda: pid in self._exits or self._gone, timeout)
            if pid in self._exits:
                return self._exits[pid]
            if self._gone:
                # Its launcher saw the zygote go and ended the sandbox: counted as killed.
                return -signal.SIGKILL
            return None

    def kill(self, pid: int) -> None:
        try:
            self._send(b"K" + PID.pack(pid))
        except ZygoteGone:
            pass

    def release(self, pid: int) -> None:
        try:
            self._send(b"R" + PID.pack(pid))
        except ZygoteGone:
            pass
        with self._state:
            self._exits.pop(pid, None)

    def close(self) -> None:
        self._gone = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=5)


class ForkedProcess:
    """What `LearnerProcess` needs of a `subprocess.Popen`, for a child forked by a zygote.
    `pid` is the child's launcher, leader of its own process group."""

    def __init__(self, zygote: Zygote, pid: int, *, stdin, stdout, stderr) -> None:
        self.zygote = zygote
        self.pid = pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.returncode: int | None = None
        self._released = False

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.returncode(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.zygote.wait(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout)
        return self.returncode

    def kill(self) -> None:
        """SIGKILL to its whole group, whether or not it has ended: the zygote reaps it only
        once released, so the group is still this child's."""
        if not self._released:
            self.zygote.kill(self.pid)

    def release(self) -> None:
        if not self._released:
            self._released = True
            self.zygote.release(self.pid)


# -- the zygote's side ---------------------------------------------------------------


def _import_libraries() -> None:
    import numpy  # noqa: F401
    import jax  # noqa: F401
    import jax.numpy  # noqa: F401
    import optax  # noqa: F401
    from flax import nnx  # noqa: F401

    # The engine's own modules are not kept: the child imports them afresh from the sandbox's
    # copy, as a fresh child does (small, and then nothing in it names the host's folders).


def serve(sock: socket.socket) -> None:
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    live: set[int] = set()  # forked, not yet reaped
    reported: set[int] = set()
    sock.send(b"Y")
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [], 1.0 if live else None)
        if wake_r in ready:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
        for pid in sorted(live - reported):
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                info = None
                live.discard(pid)
            if info is not None:
                code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
                reported.add(pid)
                sock.send(b"X" + EXIT.pack(pid, code))
        if sock not in ready:
            continue
        try:
            msg, fds, _flags, _addr = socket.recv_fds(sock, 64, 8)
        except OSError:
            msg, fds = b"", []
        if not msg:
            # The worker is gone: so is every child (its launcher notices it was re-parented).
            for pid in live:
                _kill_group(pid)
            return
        kind, body = msg[:1], msg[1:]
        if kind == b"F" and len(fds) == 4:
            try:
                pid = os.fork()
            except OSError as e:
                for fd in fds:
                    os.close(fd)
                sock.send(b"E" + str(e).encode()[:60])
                continue
            if pid == 0:
                try:
                    os.close(wake_r)
                    os.close(wake_w)
                    _become_child(sock, fds)
                finally:
                    os._exit(125)
            for fd in fds:
                os.close(fd)
            live.add(pid)
            sock.send(b"P" + PID.pack(pid))
        else:
            for fd in fds:
                os.close(fd)
            if len(body) != PID.size:
                continue
            (pid,) = PID.unpack(body)
            if pid not in live:
                continue
            if kind == b"K":
                _kill_group(pid)
            elif kind == b"R":
                _kill_group(pid)
                os.waitpid(pid, 0)
                live.discard(pid)
                reported.discard(pid)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _become_child(sock: socket.socket, fds: list[int]) -> None:
    """In the fork: take the four descriptors, read the config, and do what `launcher.main` does."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    sock.close()
    os.setsid()
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    config_fd = os.dup(fds[3])
    os.closerange(3, config_fd)
    os.closerange(config_fd + 1, 1 << 16)
    chunks = []
    while True:
        chunk = os.read(config_fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(config_fd)
    config = json.loads(b"".join(chunks))
    # The child's environment, plus what the libraries' imports put in the zygote's (JAX sets
    # TPU_SKIP_MDS_QUERY): a fresh child's imports would have put it in its own.
    by_imports = {k: v for k, v in os.environ.items() if _START_ENV.get(k) != v}
    os.environ.clear()
    os.environ.update(config["env"])
    for key, value in by_imports.items():
        os.environ.setdefault(key, value)
    os.chdir(config["cwd"])
    from course.engine import launcher

    launcher.main(config["args"], payload=_run_child)


def _run_child(argv: list[str], env: dict[str, str]) -> None:
    """The payload, in the sandbox: `python -I child.py FLAGS` (argv), minus the libraries'
    imports. The engine is imported afresh from the sandbox's copy, as a fresh child does: the
    host's course folder does not exist in here, and nothing in the child should name it."""
    from course.engine import launcher

    _close_on_exec_fds()
    launcher.drop_capabilities()
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # NumPy's global generator would be the zygote's in every child (`random` reseeds itself)
        numpy.random.seed()
    for name in [n for n in sys.modules if n == "course" or n.startswith("course.")]:
        del sys.modules[name]
    del sys.path[0]  # the host's course root; child.py puts the sandbox's in its place
    sys.argv = list(argv[2:])
    import importlib.util

    spec = importlib.util.spec_from_file_location("__main__", argv[2])
    module = importlib.util.module_from_spec(spec)
    sys.modules["__main__"] = module
    try:
        spec.loader.exec_module(module)  # runs main() and ends the process, as its script does
    except BaseException:  # what a fresh child's interpreter would print before exiting 1
        import traceback

        traceback.print_exc()
    finally:
        os._exit(1)


def _close_on_exec_fds() -> None:
    """Close what `execve` would: every descriptor marked close-on-exec (the launcher's pipe
    for the payload's status, among others), so the payload holds what a fresh child holds."""
    import fcntl

    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd < 3:
            continue
        try:
            if fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC:
                os.close(fd)
        except OSError:
            pass  # the listing's own descriptor, closed by now


_START_ENV: dict[str, str] = {}


def main(argv: list[str]) -> int:
    sock = socket.socket(fileno=int(argv[0]))
    _START_ENV.update(os.environ)
    _import_libraries()
    serve(sock)
    return 0


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))

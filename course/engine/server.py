"""A check server per workspace, so that a one-off `jaxlings check` answers warm.

A fresh `jaxlings check` pays for Python, pytest, JAX and the reference before
it checks anything. The server is one long-lived `CheckSession` (the trusted
parent, as in `watch` and the app) that later `jaxlings check` commands of the
same workspace hand their checks to, the way `dmypy` serves `mypy`:

- started on demand by the first `check` (`check_exercise`), detached;
- it ends itself after `IDLE_S` seconds without a request, when a newer
  course, interpreter or environment asks (a fingerprint is compared on every
  request), and within about `WATCH_S` seconds of its workspace, state folder
  or own folder being deleted or replaced; its warm children end with it;
- it stays warm (JAX loaded, a learner child ready) for `WARM_S` seconds after
  a request; then it cools: it ends its children and re-executes itself, on
  the same socket, as a process that has not imported JAX (a few tens of MB
  instead of several hundred), and warms again on the next request;
- it is the user's own: its socket lies in a 0700 folder under the workspace's
  `.jaxlings/` (hidden from the sandboxed learner process), it answers only
  peers of the same user id, and only requests that carry the token from the
  0600 file next to the socket;
- if it cannot be reached or started, the check runs in this process, as
  before, and one line on stderr says so.

The client records progress itself and names the seed only when the learner chose one (otherwise
the server uses the seed it drew for the check it ran ahead, `course.engine.ahead`); the server returns
the `ExerciseResult` as JSON.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # Run as a script with -I: import `course` from this file's checkout, never from the current folder.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import fcntl
import hashlib
import hmac
import json
import secrets
import select
import signal
import socket
import struct
import subprocess
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

IDLE_S = float(os.environ.get("JAXLINGS_SERVER_IDLE", "600"))
# How long after a request the server keeps JAX and a warm learner child: the learner
# checks again soon while working on an exercise, and a cool server pays a few seconds.
WARM_S = float(os.environ.get("JAXLINGS_SERVER_WARM", "120"))
WATCH_S = 1.0  # how often a waiting server looks whether its folders are still there
START_TIMEOUT = 180.0  # Python and JAX on a busy machine
BUSY_TIMEOUT = 900.0  # longer than any one check
ENV_SWITCH = "JAXLINGS_SERVER"  # "0" turns the server off
HEADER = struct.Struct("!Q")
MAX_FRAME = 64 * 1024 * 1024
# Environment that changes what a check does or sees; other variables (terminal, shell) do not matter.
_ENV_PREFIXES = ("JAXLINGS_", "JAX_", "XLA_", "TF_", "CUDA_", "PYTHON", "LD_", "OMP_", "MKL_")
_ENV_NAMES = ("PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "XDG_CACHE_HOME")
# The language travels with each request (`lang`), so one server answers in any language.
_ENV_IGNORED = ("JAXLINGS_SEED", ENV_SWITCH, "JAXLINGS_SERVER_IDLE", "JAXLINGS_SERVER_WARM", "JAXLINGS_LANG")


class Unavailable(Exception):
    """The server cannot be used; the message says why, in a few words."""


# -- where and who ---------------------------------------------------------------


def server_dir(state: Path | None = None) -> Path:
    from course import paths

    return (Path(state) if state is not None else paths.state_dir()).resolve() / "server"


def _socket_path(folder: Path) -> Path:
    return folder / "check.sock"


def fingerprint() -> str:
    """What the server must share with its client: interpreter, course code and environment."""
    from course import paths

    h = hashlib.sha256()
    h.update(sys.executable.encode() + b"\0" + str(paths.PACKAGE_DIR).encode("utf-8", "surrogateescape") + b"\0")
    newest = 0
    for dirpath, dirnames, filenames in os.walk(paths.PACKAGE_DIR):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in filenames:
            if name.endswith(".py"):
                try:
                    newest = max(newest, os.stat(os.path.join(dirpath, name)).st_mtime_ns)
                except OSError:
                    pass
    h.update(str(newest).encode() + b"\0")
    for key in sorted(os.environ):
        if key in _ENV_IGNORED or not (key.startswith(_ENV_PREFIXES) or key in _ENV_NAMES):
            continue
        h.update(f"{key}={os.environ[key]}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _private_dir(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = folder.stat()
    if st.st_uid != os.getuid():
        raise Unavailable(f"{folder} belongs to another user")
    if st.st_mode & 0o077:
        os.chmod(folder, 0o700)


# -- frames ------------------------------------------------------------------------


def _send(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(HEADER.pack(len(data)) + data)


def _recv(sock: socket.socket, deadline: float | None = None) -> Any:
    head = _recv_exact(sock, HEADER.size, deadline)
    (n,) = HEADER.unpack(head)
    if n > MAX_FRAME:
        raise ValueError("frame too large")
    return json.loads(_recv_exact(sock, n, deadline))


def _recv_exact(sock: socket.socket, n: int, deadline: float | None) -> bytes:
    chunks, got = [], 0
    while got < n:
        # No deadline: a check has its own time limits. Still waited on in slices, so that
        # Ctrl-C is seen even when the kernel hands SIGINT to another of this process's threads.
        left = 0.5 if deadline is None else deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("no answer in time")
        sock.settimeout(min(left, 0.5))
        try:
            chunk = sock.recv(min(n - got, 1 << 20))
        except TimeoutError:
            if deadline is None or time.monotonic() < deadline:
                continue
            raise
        if not chunk:
            raise ConnectionError("connection closed")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


# -- the server --------------------------------------------------------------------


class Server:
    """One workspace's server. `listen_fd`, `lock_fd` and `idle_left` are handed over when a
    cooling server re-executes itself (`_cool`): the socket and the lock stay the same."""

    def __init__(self, state: Path, idle: float = IDLE_S, warm: float = WARM_S, *,
                 listen_fd: int | None = None, lock_fd: int | None = None, idle_left: float | None = None) -> None:
        self.env = dict(os.environ)  # as started: what a re-executed server gets again
        self.state = Path(state).resolve()
        self.folder = server_dir(self.state)
        self.idle = idle
        self.warm = warm
        self.fingerprint = fingerprint()
        self.token = secrets.token_hex(32)
        self._stop = False
        self._listen_fd = listen_fd
        self._lock_fd = lock_fd
        self._idle_left = idle if idle_left is None else min(idle, idle_left)
        self._watched: dict[Path, tuple[int, int] | None] = {}
        self.session: Any = None

    # -- what it serves ---------------------------------------------------------
    def _identities(self) -> dict[Path, tuple[int, int] | None]:
        found: dict[Path, tuple[int, int] | None] = {}
        for folder in (self.state.parent, self.state, self.folder):
            try:
                st = os.stat(folder)
                found[folder] = (st.st_dev, st.st_ino)
            except OSError:
                found[folder] = None
        return found

    def gone(self) -> bool:
        """Whether the workspace, its state folder or the server's folder was deleted or replaced."""
        return self._identities() != self._watched

    # -- life -------------------------------------------------------------------
    def serve(self) -> int:
        if self._listen_fd is None:
            _private_dir(self.folder)
            lock = os.open(self.folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(lock)
                return 0  # another server owns this workspace
            path = _socket_path(self.folder)
            path.unlink(missing_ok=True)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        else:
            lock = self._lock_fd if self._lock_fd is not None else -1
            sock = socket.socket(fileno=self._listen_fd)
            path = _socket_path(self.folder)
        token_file = self.folder / "token"
        cooled = False
        try:
            if self._listen_fd is None:
                self._write_token(token_file)
                sock.bind(str(path))
                os.chmod(path, 0o600)
                sock.listen(8)
                # The client that started this server asks for a check at once: be warm for it.
                self.session = self._open_session()
            else:
                self._read_token(token_file)
            self._watched = self._identities()
            if any(v is None for v in self._watched.values()):
                return 0  # deleted while it started
            signal.signal(signal.SIGTERM, self._terminate)
            cooled = self._loop(sock) == "cool"
        finally:
            if self.session is not None:
                self.session.close()  # its warm children end here, before this process changes or ends
                self.session = None
            evaluator = sys.modules.get("course.engine.evaluator")
            if evaluator is not None:
                evaluator.close_shared()  # so does the evaluator: a cool server holds no child
            if cooled:
                self._cool(sock, lock)  # returns only if re-executing failed
            sock.close()
            if not self.gone():
                path.unlink(missing_ok=True)
                token_file.unlink(missing_ok=True)
            if lock >= 0:
                os.close(lock)
        return 0

    def _write_token(self, token_file: Path) -> None:
        tmp = self.folder / f"token.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.token)
        os.replace(tmp, token_file)

    def _read_token(self, token_file: Path) -> None:
        """A re-executed server keeps the token its clients hold; a new one if it is unreadable."""
        try:
            token = token_file.read_text()
        except OSError:
            token = ""
        if len(token) == 64 and all(c in "0123456789abcdef" for c in token):
            self.token = token
        else:
            self._write_token(token_file)

    def _terminate(self, _signum: int, _frame: Any) -> None:
        self._stop = True  # seen within WATCH_S; the session then closes its children

    def _open_session(self) -> Any:
        from course.engine.runner import CheckSession, workspace_compile_cache

        return CheckSession(compile_cache=workspace_compile_cache(self.state), run_ahead=True)

    def _cool(self, sock: socket.socket, lock: int) -> None:
        """Start again as a process without JAX, on the same socket and lock (same pid)."""
        left = max(0.0, self._idle_left)
        argv = [sys.executable, "-I", str(Path(__file__).resolve()), "--state", str(self.state),
                "--listen-fd", str(sock.fileno()), "--lock-fd", str(lock), "--idle-left", f"{left:.1f}"]
        try:
            os.set_inheritable(sock.fileno(), True)
            os.set_inheritable(lock, True)
            sys.stdout.flush()
            sys.stderr.flush()
            os.execve(sys.executable, argv, self.env)
        except OSError as e:
            print(f"cannot start again without JAX ({e}); ending", file=sys.stderr)

    def _loop(self, sock: socket.socket) -> str:
        """Serve until idle, gone, stopped or (when warm and unused for `warm` seconds) due to cool."""
        last = time.monotonic() - (self.idle - self._idle_left)
        while not self._stop:
            idle_for = time.monotonic() - last
            self._idle_left = self.idle - idle_for
            if self._idle_left <= 0:
                return "idle"
            if self.gone():
                return "gone"
            wait = min(self._idle_left, WATCH_S)
            if self.session is not None:
                if idle_for >= self.warm:
                    return "cool"
                wait = min(wait, self.warm - idle_for)
            ready, _, _ = select.select([sock], [], [], max(wait, 0.0))
            if not ready:
                continue
            conn, _ = sock.accept()
            with conn:
                try:
                    if self._handle(conn) == "check":
                        last = time.monotonic()  # only a check counts as use: a ping keeps nothing warm
                except (OSError, ValueError, ConnectionError, TimeoutError):
                    pass  # a client that went away or spoke nonsense: nothing to answer
        return "stop"

    def _handle(self, conn: socket.socket) -> str | None:
        """Answer one request; the operation answered, None for a peer that gets no answer."""
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
        if uid != os.getuid():
            return None
        msg = _recv(conn, time.monotonic() + 10)
        if not isinstance(msg, dict) or not hmac.compare_digest(str(msg.get("token", "")), self.token):
            return None
        op = msg.get("op")
        if op == "ping":
            _send(conn, {"ok": True, "fingerprint": self.fingerprint, "pid": os.getpid(),
                         "warm": self.session is not None})
        elif op == "stop":
            self._stop = True
            _send(conn, {"ok": True})
        elif op == "check":
            _send(conn, self._check(msg, conn if msg.get("stream") else None))
            _release_freed_memory()
        else:
            _send(conn, {"ok": False, "message": f"unknown operation {op!r}"})
        return str(op)

    def _check(self, msg: dict, stream: socket.socket | None = None) -> dict:
        from course import i18n
        from course.catalog import ManifestError, load_catalog

        if msg.get("fingerprint") != self.fingerprint:
            self._stop = True  # the client runs a newer course or another environment
            return {"ok": False, "stale": True, "message": "the server is out of date"}
        try:
            # The messages are built here, in the language of this request, whatever the server started in.
            i18n.set_language(str(msg.get("lang") or i18n.DEFAULT))
            if self.session is None:
                self.session = self._open_session()
            exercise = load_catalog().exercise(str(msg["exercise"]))
            learner = msg.get("learner_file")
            # Each test's outcome goes to the client as it lands, before the verdict.
            tell = (lambda outcome: _send(stream, {"outcome": asdict(outcome)})) if stream is not None else None
            seed = msg.get("seed")  # None: the server's own, drawn for the check it ran ahead
            result = self.session.run(exercise, seed=None if seed is None else int(seed), on_outcome=tell,
                                      learner_file=str(learner) if learner is not None else None)
        except (ManifestError, KeyError, ValueError) as e:
            return {"ok": False, "message": f"{type(e).__name__}: {e}"}
        except Exception as e:  # noqa: BLE001 - the client falls back to a check of its own
            return {"ok": False, "message": f"the server failed: {type(e).__name__}: {e}"}
        return {"ok": True, "result": result.to_dict()}


def _release_freed_memory() -> None:
    """Hand the heap that a check freed back to the system (glibc keeps it otherwise)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        trim = getattr(libc, "malloc_trim", None)
        if trim is not None:
            trim(0)
    except OSError:
        pass


# -- the client ----------------------------------------------------------------------


def _token(folder: Path) -> str:
    try:
        return (folder / "token").read_text()
    except OSError:
        raise Unavailable("no server is running") from None


def _call(folder: Path, msg: dict, timeout: float | None, on_frame: Any = None) -> Any:
    path = _socket_path(folder)
    if len(os.fsencode(path)) >= 104:
        raise Unavailable("the workspace path is too long for a socket")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(5)
        try:
            sock.connect(str(path))
        except OSError:
            raise Unavailable("no server is running") from None
        _send(sock, {**msg, "token": _token(folder)})
        deadline = None if timeout is None else time.monotonic() + timeout
        reply = _recv(sock, deadline)
        while isinstance(reply, dict) and "outcome" in reply and on_frame is not None:
            on_frame(reply["outcome"])  # a test's outcome, streamed before the verdict
            reply = _recv(sock, deadline)
        return reply
    finally:
        sock.close()


def _start(folder: Path, state: Path) -> subprocess.Popen:
    _private_dir(folder)
    log = os.open(folder / "server.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        return subprocess.Popen(
            [sys.executable, "-I", str(Path(__file__).resolve()), "--state", str(state)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=str(folder),
            env=dict(os.environ), start_new_session=True, close_fds=True,
        )
    finally:
        os.close(log)


def _ready(folder: Path, state: Path, fp: str) -> None:
    """A running server with this fingerprint, started if need be; Unavailable if none can be had."""
    try:
        # A server busy with another check answers once that check is done.
        reply = _call(folder, {"op": "ping"}, BUSY_TIMEOUT)
        if reply.get("fingerprint") == fp:
            return
        _call(folder, {"op": "stop"}, BUSY_TIMEOUT)  # out of date: it ends after answering
    except (Unavailable, OSError, ValueError, ConnectionError, TimeoutError):
        pass
    proc = _start(folder, state)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        try:
            reply = _call(folder, {"op": "ping"}, 10)
        except (Unavailable, OSError, ValueError, ConnectionError, TimeoutError):
            reply = None
        if reply is not None and reply.get("fingerprint") == fp:
            return
        if proc.poll() is not None and reply is None:
            # It ended: another server may have held the lock while it stopped; one more try.
            if proc.returncode != 0:
                raise Unavailable(f"the server did not start (see {folder / 'server.log'})")
            proc = _start(folder, state)
        _wait_for_socket(folder, 0.1)
    raise Unavailable("the server did not start in time")


def _wait_for_socket(folder: Path, seconds: float) -> None:
    # Polling a socket that does not exist yet: nothing to wait on but time.
    time.sleep(seconds)


def check_exercise(exercise: Any, *, seed: int | None = None, on_outcome: Any = None) -> Any:
    """Check `exercise` (the learner's file in the workspace) through the workspace's server.

    Falls back to a check in this process, saying so on stderr, when the
    server is turned off (JAXLINGS_SERVER=0), cannot be started or fails.
    `on_outcome` is told each test's `CheckOutcome` as it lands.
    """
    from course import i18n, paths
    from course.engine.settings import draw_seed
    from course.engine.runner import run_exercise

    # A seed the learner chose (--seed, JAXLINGS_SEED) goes to the server; otherwise the server
    # uses the one it drew for the check it ran ahead of this one.
    seed = draw_seed(seed) if seed is not None or os.environ.get("JAXLINGS_SEED", "").strip() else None
    if os.environ.get(ENV_SWITCH, "1").strip() == "0" or not hasattr(socket, "AF_UNIX"):
        return run_exercise(exercise, seed=seed, on_outcome=on_outcome)
    state = paths.state_dir()
    folder = server_dir(state)
    try:
        fp = fingerprint()
        for _ in range(2):
            _ready(folder, state, fp)
            told = _Told(on_outcome)
            reply = _call(folder, {"op": "check", "exercise": exercise.name, "seed": seed, "fingerprint": fp,
                                   "lang": i18n.language(), "learner_file": str(exercise.exercise_path()),
                                   "stream": on_outcome is not None}, None, on_frame=told)
            if reply.get("ok"):
                return result_from_dict(reply["result"])
            if not reply.get("stale"):
                raise Unavailable(str(reply.get("message", "the server failed")))
        raise Unavailable("the server stays out of date")
    except (Unavailable, OSError, ValueError, ConnectionError, TimeoutError, KeyError, TypeError) as e:
        print(f"jaxlings: the check server is unavailable ({e}); checking in this process.", file=sys.stderr)
        return run_exercise(exercise, seed=seed, on_outcome=on_outcome)


class _Told:
    """Hands the streamed outcomes on as `CheckOutcome`s, each test once (a check that the
    server could not finish is run again here, and tells again only what is new)."""

    def __init__(self, on_outcome: Any) -> None:
        self.on_outcome = on_outcome

    def __call__(self, data: Any) -> None:
        from course.engine.results import CheckOutcome

        if self.on_outcome is None or not isinstance(data, dict):
            return
        try:
            outcome = CheckOutcome(**{k: data[k] for k in ("name", "outcome", "cause", "message", "duration")},
                                   file=data.get("file"), line=data.get("line"))
        except (KeyError, TypeError):
            return
        self.on_outcome(outcome)


def result_from_dict(data: dict) -> Any:
    from course.engine.results import CheckOutcome, ExerciseResult

    checks = [CheckOutcome(**c) for c in data["checks"]]
    return ExerciseResult(**{**data, "checks": checks})


def stop(state: Path | None = None) -> bool:
    """Ask the workspace's server to end; False if none was running."""
    try:
        _call(server_dir(state), {"op": "stop"}, 10)
        return True
    except (Unavailable, OSError, ValueError, ConnectionError, TimeoutError):
        return False


def main(argv: list[str]) -> int:
    def value(flag: str) -> str | None:
        return argv[argv.index(flag) + 1] if flag in argv else None

    state = Path(value("--state")) if value("--state") is not None else None
    if state is None:
        from course import paths

        state = paths.state_dir()
    listen, lock, left = value("--listen-fd"), value("--lock-fd"), value("--idle-left")
    return Server(state, listen_fd=int(listen) if listen is not None else None,
                  lock_fd=int(lock) if lock is not None else None,
                  idle_left=float(left) if left is not None else None).serve()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""The parent's side of the learner's process: start it, talk to it, limit it, end it.

A `LearnerProcess` runs `course/engine/child.py` with a wall-clock limit per request
and a memory limit, and turns everything that can go wrong on the child's side
(timeout, out of memory, crash, exit, garbage on the wire) into a
`LearnerFailure` with its own cause. Its replies are decoded with
`course.engine.wire.from_wire`: plain data only, never unpickled.

`WarmPool` keeps one child started ahead of time (libraries imported, no
learner module loaded yet); each child serves one exercise run and is then
ended, so no state leaks from one run to the next.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import psutil

from course.engine.checking import LearnerFailure
from course.engine.isolation import Sandbox
from course.engine.launcher import SETUP_FAILED
from course.engine.child import CHANNEL_CLOSED, HEADER
from course.engine.wire import DecodeError, from_wire, read_json, to_wire
from course.engine.zygote import ForkedProcess, Zygote, ZygoteGone
from course.engine.words import _

CHILD_SCRIPT = Path(__file__).resolve().parent / "child.py"
DEFAULT_MEMORY_MB = int(os.environ.get("JAXLINGS_MEMORY_MB", "4096"))
# A reply is read whole before it is judged: bounded in bytes here, in containers and depth
# by `wire.read_json`, so a hostile one costs at most a small multiple of this.
MAX_REPLY = 64 * 1024 * 1024
POLL_S = 0.05
STDERR_KEEP = 64 * 1024
# Env vars that make libraries print to the terminal or change the device set;
# the child gets the parent's env minus these unless the caller says otherwise.
# A compilation cache named by the user is trusted by the user's own JAX; the
# learner's process gets its own (`course.engine.runner.CompileCache`) or none.
_DROP_ENV = ("PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS", "PYTHONSTARTUP", "PYTHONINSPECT", "JAX_COMPILATION_CACHE_DIR")


_ZYGOTE: Zygote | None = None
STARTED = {"forked": 0, "fresh": 0}  # sandboxed children this process started, by how they started


def use_zygote(zygote: Zygote | None) -> Zygote | None:
    """Fork sandboxed children (unshare tier) from `zygote`, or (None) start each afresh.
    Returns the one used before."""
    global _ZYGOTE
    old, _ZYGOTE = _ZYGOTE, zygote
    return old


def child_environment(base: dict[str, str] | None, extra: dict[str, str] | None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    for key in _DROP_ENV:
        env.pop(key, None)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # keep XLA's info logs out of the learner's output
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    from course.engine.compile_flags import for_child

    return for_child(env)


class LearnerProcess:
    """One child process. Not thread-safe: one request at a time."""

    def __init__(
        self,
        *,
        env: dict[str, str],
        argv_prefix: tuple[str, ...] = (),
        cwd: str | os.PathLike | None = None,
        memory_mb: int = DEFAULT_MEMORY_MB,
        preload: bool = True,
        python: str = sys.executable,
        sandbox: Sandbox | None = None,
        zygote: Zygote | None = None,
    ) -> None:
        self.memory_mb = memory_mb
        self._zygote = zygote
        self.sandbox = sandbox
        self._own_cwd = None
        script = str(CHILD_SCRIPT) if sandbox is None else sandbox.child_script
        argv = [python, "-I", script, "--memory-mb", str(memory_mb)]
        if preload:
            argv.append("--preload")
        if sandbox is not None:
            if sandbox.limits_tasks:
                from course.engine.isolation import MAX_TASKS

                argv += ["--max-tasks", str(MAX_TASKS)]
            argv, cwd = sandbox.command(argv), sandbox.cwd
        elif cwd is None:
            # A throw-away working directory: files the learner's code writes with
            # relative paths land here, not in the course.
            self._own_cwd = tempfile.TemporaryDirectory(prefix="jaxlings-child-")
            cwd = self._own_cwd.name
        argv = [*argv_prefix, *argv]
        self.started = time.monotonic()
        self.proc = self._forked(argv, env, cwd, argv_prefix, python)
        if self.proc is None:
            self.proc = self._popen(argv, env, cwd)
        if sandbox is not None:
            STARTED["forked" if isinstance(self.proc, ForkedProcess) else "fresh"] += 1
        self._stderr: deque[bytes] = deque()
        self._stderr_size = 0
        self._stderr_total = 0
        self._stderr_lock = threading.Lock()
        self._stderr_more = threading.Condition(self._stderr_lock)
        self._request_mark = 0  # where the current request's output begins
        self._dumps: list[str] = []
        self._drain = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drain.start()
        self._buffer = b""
        self.ready = False
        self.dead: LearnerFailure | None = None
        self.killed_by_us = False
        self._ps: psutil.Process | None = None

    def _forked(self, argv, env, cwd, argv_prefix, python) -> "ForkedProcess | None":
        """The child forked by its zygote (this one's, or the process's: `use_zygote`) where it can be."""
        zygote = self._zygote if self._zygote is not None else _ZYGOTE
        if (zygote is None or self.sandbox is None or self.sandbox.tier != "unshare" or python != sys.executable
                or not zygote.accepts(env, tuple(argv_prefix))):
            return None
        try:
            return zygote.spawn(argv[4:], env, str(cwd))  # the launcher's own arguments
        except ZygoteGone:
            return None

    @staticmethod
    def _popen(argv, env, cwd) -> subprocess.Popen:
        return subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its own process group, so a kill reaches its children
            bufsize=0,
        )

    def stage(self, learner_file: Path) -> str:
        """The path this child should load `learner_file` from (a sandbox sees only a copy)."""
        return str(learner_file) if self.sandbox is None else self.sandbox.stage(learner_file)

    # -- output --------------------------------------------------------------
    def _drain_stderr(self) -> None:
        stream = self.proc.stderr
        assert stream is not None
        while True:
            try:
                chunk = stream.read(8192)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            with self._stderr_lock:
                self._stderr.append(chunk)
                self._stderr_size += len(chunk)
                self._stderr_total += len(chunk)
                while self._stderr_size > STDERR_KEEP and len(self._stderr) > 1:
                    self._stderr_size -= len(self._stderr.popleft())
                self._stderr_more.notify_all()

    def output(self) -> str:
        """The tail of what the child printed (stdout and stderr), without stack dumps we asked for."""
        with self._stderr_lock:
            text = b"".join(self._stderr).decode("utf-8", errors="replace")
        for dump in self._dumps:
            text = text.replace(dump, "")
        return text

    def stack_dump(self, wait: float = 1.0) -> str:
        """The stacks the child wrote to stderr during the current request ("" if none).

        The child writes them itself shortly before the time limit (the
        request's `dump_after`); this waits a moment for the last of them to
        be drained."""
        give_up = time.monotonic() + wait
        with self._stderr_lock:
            while "most recent call first" not in self._stderr_since(self._request_mark):
                left = give_up - time.monotonic()
                if left <= 0 or self.proc.poll() is not None:
                    break
                self._stderr_more.wait(timeout=min(0.05, left))
            text = self._stderr_since(self._request_mark)
        begin = text.find("Timeout (")
        if begin < 0:
            return ""
        dump = text[begin:]
        self._dumps.append(dump)
        return dump

    def _forget_late_dump(self) -> None:
        # A request that finished between the child's stack dump and the time limit:
        # the dump is not the learner's output.
        with self._stderr_lock:
            text = self._stderr_since(self._request_mark)
        begin = text.find("Timeout (")
        if begin >= 0 and "most recent call first" in text[begin:]:
            self._dumps.append(text[begin:])

    def _stderr_since(self, start: int) -> str:
        data = b"".join(self._stderr)
        kept_from = self._stderr_total - len(data)
        return data[max(0, start - kept_from):].decode("utf-8", errors="replace")

    # -- protocol ------------------------------------------------------------
    def wait_ready(self, deadline: float) -> None:
        if self.ready:
            return
        msg = self._read(deadline, during=_("starting Python for your code"))
        if not isinstance(msg, dict) or not msg.get("ready"):
            detail = msg.get("message") if isinstance(msg, dict) else None
            self._die(LearnerFailure("crash", _("the process for your code could not start: {detail!r}").format(
                detail=detail or msg)))
        self.ready = True

    def request(self, msg: dict, deadline: float, *, during: str, pauses: dict[str, float] | None = None) -> Any:
        """Send one request and return the decoded value, or raise LearnerFailure.

        `pauses` are waits only this side knows: while the request runs, the child may
        ask for each of them once by name (`course.engine.child.pause`), and this side
        answers after that many seconds. A check can then judge a timing against a
        duration the learner's process never held.
        """
        if self.dead is not None:
            raise self.dead
        self.wait_ready(deadline)
        with self._stderr_lock:
            self._request_mark = self._stderr_total
        payload = json.dumps(msg, separators=(",", ":")).encode()
        try:
            self._write(HEADER.pack(len(payload)) + payload, deadline, during)
        except BrokenPipeError:
            self._read(deadline, during=during)  # reports how the child ended
        waits = dict(pauses or {})
        reply = self._read(deadline, during=during)
        while isinstance(reply, dict) and "pause" in reply:
            name = reply["pause"]
            if not isinstance(name, str) or name not in waits:
                self._die(LearnerFailure("crash", _("the process for your code asked for an unknown wait "
                                                    "{during}.").format(
                    during=during)))
            time.sleep(max(0.0, min(waits.pop(name), deadline - time.monotonic())))
            resumed = json.dumps({"resumed": name}).encode()
            self._write(HEADER.pack(len(resumed)) + resumed, deadline, during)
            reply = self._read(deadline, during=during)
        self._forget_late_dump()
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            self._die(LearnerFailure("crash", _("the process for your code sent a malformed reply {during}.").format(
                during=during)))
        if reply["ok"]:
            try:
                return from_wire(reply.get("value"))
            except DecodeError as e:
                self._die(LearnerFailure("not_plain_data", _("the result {during} could not be read: {e}").format(
                    during=during, e=e)))
        cause = reply.get("cause")
        if cause not in LEARNER_CAUSES:
            cause = "crash"
        details = {k: reply[k] for k in ("code", "line", "name", "missing", "error", "words") if k in reply}
        raise LearnerFailure(cause, str(reply.get("message", ""))[:20000], **details)

    def _write(self, data: bytes, deadline: float, during: str) -> None:
        fd = self.proc.stdin.fileno()  # type: ignore[union-attr]
        view = memoryview(data)
        while view:
            self._wait_fd(fd, deadline, during, write=True)
            view = view[os.write(fd, view[: 1 << 16]) :]

    def _read(self, deadline: float, *, during: str) -> Any:
        head = self._read_exact(HEADER.size, deadline, during)
        (n,) = HEADER.unpack(head)
        if n > self.memory_mb << 20:
            # The child builds each reply in its memory: a length beyond its limit is no reply's.
            self._die(LearnerFailure("not_plain_data", _(
                "the process for your code wrote something that is not a result where its results go "
                "{during} (it began {head}); nothing of it was read.").format(during=during, head=repr(head))))
        if n > MAX_REPLY:
            self._die(LearnerFailure("out_of_memory", _("the result {during} is too large ({mib} MiB).").format(
                during=during, mib=n >> 20)))
        body = self._read_exact(n, deadline, during)
        try:
            return read_json(body)
        except DecodeError as e:
            # Nothing crashed: the reply was refused, and the message says why.
            self._die(LearnerFailure("not_plain_data", _("the check refused the reply the process for your code "
                                                         "sent {during}: {e}.").format(during=during, e=e)))

    def _read_exact(self, n: int, deadline: float, during: str) -> bytes:
        fd = self.proc.stdout.fileno()  # type: ignore[union-attr]
        chunks, got = [self._buffer], len(self._buffer)
        while got < n:  # chunks joined once: growing one bytes object would copy it per chunk
            self._wait_fd(fd, deadline, during)
            chunk = os.read(fd, max(n - got, 1 << 16))
            if not chunk:
                self._die(self._ended_failure(during))
            chunks.append(chunk)
            got += len(chunk)
        data = b"".join(chunks)
        if len(data) == n:
            self._buffer = b""
            return data
        data, self._buffer = data[:n], data[n:]
        return data

    def _wait_fd(self, fd: int, deadline: float, during: str, write: bool = False) -> None:
        while True:
            now = time.monotonic()
            if now >= deadline:
                stack = self.stack_dump()
                self.kill()
                self._die(LearnerFailure("timeout", _("your code took too long {during} (time limit reached).").format(
                    during=during),
                                         stack=stack))
            r, w, __ = select.select([] if write else [fd], [fd] if write else [], [], min(POLL_S * 4, deadline - now))
            if r or w:
                return
            self._check_memory(during)

    def _check_memory(self, during: str) -> None:
        try:
            if self._ps is None:
                self._ps = psutil.Process(self.proc.pid)
            procs = [self._ps, *self._ps.children(recursive=True)]
            if isinstance(self.proc, ForkedProcess):
                # Its launcher and the namespace's init are forks of the zygote: each maps the
                # libraries the zygote imported, which a fresh launcher does not. The learner's
                # processes are the rest (the payload, what it starts, what init adopts).
                outer = {self._ps.pid, *(p.pid for p in self._ps.children())}
                procs = [p for p in procs if p.pid not in outer]
            rss = 0
            for p in procs:
                try:
                    rss += p.memory_info().rss
                except psutil.Error:
                    pass
        except psutil.Error:
            return
        if len(procs) > FORK_BOMB:
            self.kill()
            self._die(LearnerFailure("too_many_processes", _(
                "your code started {n} processes {during}, more than the {most} a check lets it have; the check "
                "stopped them all.").format(n=len(procs), during=during, most=FORK_BOMB)))
        if rss > self.memory_mb * 1024 * 1024 and len(procs) > 1:
            # Forks share their parent's pages, which each one's resident size counts again: their
            # proportional sizes add up to the memory they use. Read only now: it costs a scan of
            # each one's mappings.
            rss = 0
            for p in procs:
                try:
                    info = p.memory_full_info()
                    rss += getattr(info, "pss", info.rss)
                except psutil.Error:
                    pass
        if rss > self.memory_mb * 1024 * 1024:
            self.kill()
            self._die(
                LearnerFailure(
                    "out_of_memory",
                    _("your code used more than {memory_mb} MiB of memory {during}; it was stopped.").format(
                        memory_mb=self.memory_mb, during=during),
                )
            )

    def _ended_failure(self, during: str) -> LearnerFailure:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            # Its results channel ended while it went on running: its code closed the channel.
            self.kill()
            self.proc.wait()
            code = CHANNEL_CLOSED
        self._drain.join(timeout=1)
        tail = _tail(self.output())
        shown = "\n" + _("Last output:") + "\n" + tail if tail else ""
        if code == CHANNEL_CLOSED:
            return LearnerFailure("channel_closed", _(
                "your code closed the channel the check talks to it through (its file descriptors) {during}, so "
                "nothing it computed could reach the check; its process was stopped.{shown}").format(
                during=during, shown=shown), code=code)
        if code is not None and code < 0:
            sig = -code
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            if sig == signal.SIGKILL and not self.killed_by_us:
                return LearnerFailure(
                    "out_of_memory",
                    _("the process running your code was killed by the system {during} (usually: out of "
                      "memory).{shown}").format(during=during, shown=shown),
                    code=code,
                )
            return LearnerFailure("crash", _("the process running your code crashed ({name}) {during}.{shown}").format(
                name=name, during=during, shown=shown), code=code)
        setup = self._setup_failure(code)
        if setup is not None:
            return setup
        return LearnerFailure(
            "exit",
            _("your code ended its process (exit code {code}) {during}, so it returned nothing. Don't call "
              "os._exit / sys.exit / exit() in an exercise.{shown}").format(code=code, during=during, shown=shown),
            code=code,
        )

    def _setup_failure(self, code: int | None) -> LearnerFailure | None:
        """The sandbox's launcher gave up before Python started (its one `jaxlings-sandbox:`
        line and exit 125): no learner code had run, so the check, not the learner, failed."""
        if self.ready or code != SETUP_FAILED:
            return None
        lines = [ln for ln in self.output().splitlines() if ln.startswith("jaxlings-sandbox:")]
        if not lines:
            return None
        return LearnerFailure(
            "check_error",
            _("the sandbox for your code could not start ({why}). Your code did not run; check again, "
              "and report this if it stays.").format(why=lines[-1][len("jaxlings-sandbox:"):].strip()),
            code=code,
        )

    def _die(self, failure: LearnerFailure):
        self.dead = failure
        self.kill()
        raise failure

    # -- lifetime ------------------------------------------------------------
    def kill(self) -> None:
        if isinstance(self.proc, ForkedProcess):
            # The zygote reaps it only once released: its group is still its own.
            if self.proc.poll() is None:
                self.killed_by_us = True
            self.proc.kill()
            return
        if self.proc.returncode is not None:
            return  # reaped: its group id may belong to another process by now
        try:
            exited = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return
        if not exited:
            self.killed_by_us = True
        # The whole group, even when its leader has ended (unreaped, so the id is
        # still ours): what the learner's code started there ends too. In a
        # sandbox, the end of its pid namespace takes everything else.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            try:
                self.proc.kill()
            except ProcessLookupError:
                pass

    def close(self) -> None:
        self.kill()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        # What it printed last may still be in the pipe: `output()` after `close()` has it all
        # (the drain ends at end of file, once no process in the group holds the pipe).
        if self._drain is not threading.current_thread():
            self._drain.join(timeout=2)
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()  # type: ignore[union-attr]
            except OSError:
                pass
        if isinstance(self.proc, ForkedProcess):
            self.proc.release()
        if self._own_cwd is not None:
            self._own_cwd.cleanup()
            self._own_cwd = None
        if self.sandbox is not None:
            self.sandbox.close()

    def alive(self) -> bool:
        return self.dead is None and self.proc.poll() is None


LEARNER_CAUSES = frozenset(
    ("syntax_error", "import_error", "missing_name", "signature", "exception", "timeout",
     "out_of_memory", "crash", "exit", "not_plain_data", "channel_closed", "too_many_processes")
)
# More processes than this in the learner's tree: a fork bomb (a DataLoader's workers are a few).
FORK_BOMB = 32


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


class WarmPool:
    """One child started ahead of time for the default environment."""

    def __init__(self, factory) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._warm: LearnerProcess | None = None
        self._closed = False

    def prestart(self) -> None:
        with self._lock:
            if self._warm is None and not self._closed:
                self._warm = self._factory()

    def wait_ready(self, timeout: float) -> bool:
        """Block until the warm child has imported its libraries (False: none, or it failed)."""
        with self._lock:
            proc = self._warm
        if proc is None:
            return False
        try:
            proc.wait_ready(time.monotonic() + timeout)
        except LearnerFailure:
            return False
        return True

    def take(self) -> LearnerProcess:
        """A fresh child: the warm one if it is healthy.

        The next one is not started here but by `prestart()` once the check is
        over: importing JAX takes a core for a second or two, and on a small
        machine that core is the check's (the learner's child and the reference
        run side by side)."""
        with self._lock:
            proc, self._warm = self._warm, None
        if proc is None or proc.proc.poll() is not None:
            if proc is not None:
                proc.close()
            proc = self._factory()
        return proc

    def close(self) -> None:
        with self._lock:
            self._closed = True
            proc, self._warm = self._warm, None
        if proc is not None:
            proc.close()


def encode_args(args: tuple, kwargs: dict) -> dict:
    from course.engine.wire import to_plain

    return {
        "args": to_wire(to_plain(list(args), where="the arguments")),
        "kwargs": to_wire(to_plain(dict(kwargs), where="the keyword arguments")),
    }

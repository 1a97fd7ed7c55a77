"""The evaluator: the only process that reads, compiles and runs a learner's program text.

A lowered program (`jax.jit(fn).lower(...).as_text()`) is data the learner's
process wrote. Handing it to MLIR's parser or to XLA is running a large C++
program on hostile input: a function that calls itself makes XLA recurse until
SIGSEGV, deeply nested regions overflow the parser's stack, and a single
`reduce_window` can keep a CPU busy for minutes. None of that may happen in a
trusted process (the check server, the CLI, the app, a grading worker), so
`course.engine.programs` forwards every such step here. Data flows one way:
`programs` imports this module to send requests; this module never imports
`programs`, and only its loop (`serve`) imports the reader
(`course.engine.program_reader`) that answers them:

- `Evaluator` (the trusted side) keeps one warm evaluator process, started
  ahead by a check session and replaced after a crash, and sends it one
  request at a time: the program's text (already bounded in size and nesting
  depth, in plain Python, by `program_types.bounded_text`) and the inputs drawn by
  the check. Every request has a wall-time limit; past it the process is
  killed. Its reply is read like a learner's: bounded in bytes, containers and
  depth, decoded as plain data (`course.engine.wire`), never unpickled.
- `serve` (this file run as a script) is the evaluator itself: each request
  goes to `program_reader.evaluate`. It holds
  nothing but the requests it is handed: no check, no reference solution. It
  runs in the check sandbox when one works here (the learner's tier:
  bubblewrap or user namespaces), with rlimits on stack, data, core files and
  CPU time per request, and it ends itself when its parent goes or after
  IDLE_SECONDS without a request.

A failure of the evaluator (a crash, a limit, a timeout) is an
`EvaluatorFailure`, a `ProgramError`: the check that sent the program fails
with a message that says what happened, and the next request starts a fresh
evaluator.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # Run as a script with -I: `course` is importable, nothing else the learner can write is.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import select
import signal
import struct
import subprocess
import threading
import time
from typing import Any

HEADER = struct.Struct("!Q")
# A request holds a program (program_types.MAX_PROGRAM_CHARS) and a check's inputs.
MAX_REQUEST = 256 * 1024 * 1024
# A reply holds a parsed signature or a program's outputs (program_types.MAX_RESULT_BYTES
# in all, base64): far below what a learner's process may send.
MAX_REPLY = 96 * 1024 * 1024
MAX_REPLY_CONTAINERS = 100_000
# Seconds for the evaluator to start (import JAX) before a request is sent: not the program's time.
START_SECONDS = 120.0
# Seconds a request that only reads a program (parse, count, cost) may take.
READ_SECONDS = 30.0
IDLE_SECONDS = 300.0
# Limits the evaluator puts on itself (see `_limit_self`).
STACK_MB = 64
DATA_MB = int(os.environ.get("JAXLINGS_MEMORY_MB", "4096"))
CPU_SECONDS_PER_REQUEST = 120
# Per-device code (shard_map) is run on as many host devices as its mesh has: the
# evaluator is started with program_reader.MAX_PARTITIONS of them (device 0 runs the rest).
HOST_DEVICES = 8
READY = b"jaxlings-evaluator-ready\n"

_SIGNALS = {signal.SIGSEGV: "SIGSEGV", signal.SIGBUS: "SIGBUS", signal.SIGABRT: "SIGABRT",
            signal.SIGILL: "SIGILL", signal.SIGFPE: "SIGFPE", signal.SIGKILL: "SIGKILL",
            signal.SIGXCPU: "SIGXCPU"}


from course.engine.program_types import EvaluatorFailure, ProgramError  # noqa: E402 - after sys.path
from course.engine.words import N_  # noqa: E402

# The messages a check shows when the evaluator, not the program's logic, failed: templates
# put into the learner's language where the error is shown (see ProgramError).

CRASHED = N_("your program could not be run: it crashed the evaluator ({signal})")
TOO_SLOW = N_("your program took longer than {seconds:g} s to run")
TOO_MUCH_CPU = N_("your program could not be run: it used more CPU time than the evaluator allows ({seconds} s)")
ENDED = N_("your program could not be run: the evaluator ended with code {code}")
UNREADABLE = N_("your program could not be run: the evaluator sent a reply the check cannot read")
NO_START = N_("the evaluator that runs programs could not start: {why}")
NO_START_GREETING = N_("the evaluator that runs programs could not start: it sent something else than its greeting")
NO_START_IN_TIME = N_("the evaluator that runs programs could not start: it was not ready within {seconds:g} s")
NO_START_ENDED = N_("the evaluator that runs programs could not start: it ended with code {code}")
REQUEST_TOO_BIG = N_("the program and its inputs are {size} MiB, more than the {limit} MiB the evaluator takes")


def _crashed(sig: str) -> EvaluatorFailure:
    return EvaluatorFailure(CRASHED, signal=sig)


def _too_slow(seconds: float) -> EvaluatorFailure:
    return EvaluatorFailure(TOO_SLOW, seconds=float(seconds))


def _too_much_cpu() -> EvaluatorFailure:
    return EvaluatorFailure(TOO_MUCH_CPU, seconds=CPU_SECONDS_PER_REQUEST)


def _ended(code: int) -> EvaluatorFailure:
    return EvaluatorFailure(ENDED, code=code)


def _unreadable() -> EvaluatorFailure:
    return EvaluatorFailure(UNREADABLE)


# -- the trusted side -------------------------------------------------------------


class Evaluator:
    """One evaluator process, started on demand (or ahead), one request at a time.

    Thread-safe: requests are serialized. After a failure the process is gone,
    and the next request starts another."""

    def __init__(self, isolation: Any = "auto") -> None:
        self._isolation = isolation
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._box: Any = None
        self._ready = False
        self.started = 0  # how many evaluators this one has started (tests read it)

    # -- lifecycle -----------------------------------------------------------
    def prestart(self) -> None:
        """Start the process now, if none is running, without waiting for it."""
        with self._lock:
            if not self._alive():
                self._start()

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _policy(self):
        if self._isolation == "auto":
            from course.engine.isolation import for_checks

            return for_checks()
        return self._isolation

    def _start(self) -> None:
        self._stop()
        from course.engine.sandbox import child_environment

        policy = self._policy()
        extra = {"JAX_PLATFORMS": "cpu", "JAX_ENABLE_X64": "0",
                 "XLA_FLAGS": _host_devices_flags(os.environ.get("XLA_FLAGS", ""))}
        script = os.path.abspath(__file__)
        if policy is not None and getattr(policy, "sandboxed", False):
            from course.engine.isolation import INSIDE_ROOT

            box = policy.sandbox()
            try:
                argv = box.command([sys.executable, "-I", f"{INSIDE_ROOT}/course/engine/evaluator.py"])
                env, cwd = box.env(extra), box.cwd
            except BaseException:
                box.close()
                raise
            self._box = box
        else:
            import tempfile

            argv = [sys.executable, "-I", script]
            env = child_environment(None, extra)
            cwd = tempfile.gettempdir()
        try:
            self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, cwd=cwd, env=env,
                                          start_new_session=True, bufsize=0)
        except OSError as e:
            self._stop()
            raise EvaluatorFailure(NO_START, why=str(e)) from None
        self._ready = False
        self.started += 1

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    proc.kill()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()
        box, self._box = self._box, None
        if box is not None:
            box.close()
        self._ready = False

    def close(self) -> None:
        with self._lock:
            self._stop()

    @property
    def pid(self) -> int | None:
        """The evaluator's process id on this side (the sandbox launcher's, in a sandbox)."""
        return self._proc.pid if self._alive() else None

    # -- requests ------------------------------------------------------------
    def call(self, op: str, payload: dict, *, seconds: float, until: float | None = None) -> Any:
        """Send one request; its result (plain data), or an EvaluatorFailure / ProgramError.
        It may take `seconds`, and must end by `until` (a `time.monotonic()`) when one is given:
        a fresh evaluator's start is not the program's time, but it is the check's."""
        from course.engine import wire

        body = wire.encode({"op": op, **payload})
        if len(body) > MAX_REQUEST:
            raise ProgramError(REQUEST_TOO_BIG, size=len(body) >> 20, limit=MAX_REQUEST >> 20)
        with self._lock:
            if not self._alive():
                self._start()
            if not self._ready:
                self._wait_ready(START_SECONDS if until is None else min(START_SECONDS, until - time.monotonic()))
            if until is not None:
                seconds = min(seconds, until - time.monotonic())
                if seconds <= 0:
                    raise _too_slow(0.0)
            try:
                self._send(HEADER.pack(len(body)) + body, time.monotonic() + seconds, seconds)
                reply = self._receive(time.monotonic() + seconds, seconds)
            except BaseException:
                self._stop()
                raise
        if type(reply) is not dict or len(reply) != 1:
            self._discard()
            raise _unreadable()
        (kind, value), = reply.items()
        if kind == "ok":
            return value
        error = ProgramError.from_reply(value) if kind == "error" else None
        if error is not None:
            raise error
        self._discard()
        raise _unreadable()

    def _discard(self) -> None:
        with self._lock:
            self._stop()

    def _wait_ready(self, seconds: float = START_SECONDS) -> None:
        deadline = time.monotonic() + seconds
        got = b""
        while len(got) < len(READY):
            try:
                chunk = self._read_some(len(READY) - len(got), deadline, seconds, starting=True)
            except EvaluatorFailure as e:
                if e.template == NO_START_IN_TIME and seconds < START_SECONDS:
                    raise _too_slow(seconds) from None  # the check's time ran out, not the start's
                raise
            got += chunk
        if got != READY:
            self._stop()
            raise EvaluatorFailure(NO_START_GREETING)
        self._ready = True

    def _send(self, data: bytes, deadline: float, seconds: float) -> None:
        fd = self._proc.stdin.fileno()  # type: ignore[union-attr]
        view = memoryview(data)
        while view:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _too_slow(seconds)
            _, w, _ = select.select([], [fd], [], left)
            if w:
                try:
                    view = view[os.write(fd, view[: 1 << 16]):]
                except BrokenPipeError:
                    raise self._death(seconds, starting=False) from None

    def _receive(self, deadline: float, seconds: float) -> Any:
        from course.engine import wire

        head = self._read_exactly(HEADER.size, deadline, seconds)
        (n,) = HEADER.unpack(head)
        if n > MAX_REPLY:
            raise _unreadable()
        body = self._read_exactly(n, deadline, seconds)
        try:
            return wire.decode(body, max_containers=MAX_REPLY_CONTAINERS)
        except wire.DecodeError:
            raise _unreadable() from None

    def _read_exactly(self, n: int, deadline: float, seconds: float) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = self._read_some(min(n - got, 1 << 20), deadline, seconds)
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _read_some(self, n: int, deadline: float, seconds: float, *, starting: bool = False) -> bytes:
        fd = self._proc.stdout.fileno()  # type: ignore[union-attr]
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self._stop()
                raise (EvaluatorFailure(NO_START_IN_TIME, seconds=float(seconds)) if starting
                       else _too_slow(seconds))
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, n)
                if not chunk:
                    raise self._death(seconds, starting=starting)
                return chunk

    def _death(self, seconds: float, *, starting: bool) -> Exception:
        """The failure for an evaluator whose output ended: how it ended, in words."""
        proc = self._proc
        try:
            code = proc.wait(timeout=10) if proc is not None else -1
        except subprocess.TimeoutExpired:
            code = -1
        self._stop()
        if starting:
            return EvaluatorFailure(NO_START_ENDED, code=code)
        if code < 0 and -code == signal.SIGXCPU:
            return _too_much_cpu()
        if code < 0:
            return _crashed(_SIGNALS.get(-code, f"signal {-code}"))
        if code > 128 and code - 128 in _SIGNALS:  # a shell or launcher that reports a signal as 128+N
            return _too_much_cpu() if code - 128 == signal.SIGXCPU else _crashed(_SIGNALS[code - 128])
        return _ended(code)


def _host_devices_flags(flags: str) -> str:
    kept = [f for f in flags.split() if "device_count" not in f]
    return " ".join([*kept, f"--xla_force_host_platform_device_count={HOST_DEVICES}"])


_SHARED: Evaluator | None = None
_SHARED_LOCK = threading.Lock()


def shared() -> Evaluator:
    """This process's evaluator (one per process: the check server, the CLI, a grading worker)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            import atexit

            _SHARED = Evaluator()
            atexit.register(_SHARED.close)
        return _SHARED


def close_shared() -> None:
    """End this process's evaluator, if it has one (a check server cooling or ending): the next
    program read or run starts a fresh one."""
    with _SHARED_LOCK:
        evaluator = _SHARED
    if evaluator is not None:
        evaluator.close()


def use_isolation(isolation: Any) -> None:
    """Run this process's evaluator under `isolation` (a check session's sandbox policy;
    None for a plain process). A running evaluator of another policy is ended."""
    ev = shared()
    with ev._lock:
        if ev._isolation is not isolation and ev._isolation != isolation:
            ev._isolation = isolation
            ev._stop()


# -- the evaluator itself ---------------------------------------------------------


def _limit_self() -> None:
    """Rlimits on this process: stack, private data (RLIMIT_DATA, not RLIMIT_AS: XLA
    reserves gigabytes of address space it never touches, so an address-space limit
    breaks `import jax`), no core files; CPU time is limited per request in `serve`."""
    import resource

    for limit, value in ((resource.RLIMIT_STACK, STACK_MB << 20), (resource.RLIMIT_DATA, DATA_MB << 20),
                         (resource.RLIMIT_CORE, 0)):
        try:
            soft, hard = resource.getrlimit(limit)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (cap, hard))
        except (ValueError, OSError):
            pass
    try:  # end with the parent, whoever re-parents us
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _cpu_limit_for_next_request() -> None:
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime) + 1
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = spent + CPU_SECONDS_PER_REQUEST
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _read_frame(fd: int, idle: float) -> bytes | None:
    r, _, _ = select.select([fd], [], [], idle)
    if not r:
        return None  # idle too long: end
    head = _read_n(fd, HEADER.size)
    if head is None:
        return None
    (n,) = HEADER.unpack(head)
    if n > MAX_REQUEST:
        return None
    return _read_n(fd, n)


def _read_n(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def serve() -> None:
    """The evaluator's loop: one request in, one reply out, until stdin ends or it is idle."""
    _limit_self()
    proto_in, proto_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # nothing XLA prints can reach the protocol
    import jax

    from course.engine import program_reader, program_types, wire

    jax.numpy.zeros(1).block_until_ready()  # the backend made before the first program's time starts
    _write(proto_out, READY)
    while True:
        frame = _read_frame(proto_in, IDLE_SECONDS)
        if frame is None:
            return
        _cpu_limit_for_next_request()
        try:
            request = wire.decode(frame)
            reply = {"ok": program_reader.evaluate(request)}
        except ProgramError as e:
            reply = {"error": e.to_reply()}
        except wire.DecodeError as e:
            reply = {"error": ProgramError(program_types.REQUEST_UNDECODABLE, error=str(e)).to_reply()}
        try:
            body = wire.encode(reply)
        except wire.NotPlainData as e:
            body = wire.encode({"error": ProgramError(program_types.RESULT_UNSENDABLE, error=str(e)).to_reply()})
        _write(proto_out, HEADER.pack(len(body)) + body)


if __name__ == "__main__":
    serve()

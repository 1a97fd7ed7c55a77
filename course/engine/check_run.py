"""One run of a check (`_Run`, what conftest.py hands to the checks) and the two sides it
talks to: `learner` (the learner's module in its child) and `reference` (the reference
solution, here or in a trusted child of its own)."""

from __future__ import annotations

import hashlib
import inspect
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from course.engine.checking import LearnerFailure
from course.catalog import Exercise
from course.engine.sandbox import LearnerProcess, encode_args
from course.engine.settings import READY_TIMEOUT, CheckSettings
from course.engine.wire import from_wire, to_plain, to_wire
from course.engine.words import N_, _, render

class LearnerProxy:
    """`learner` in checks: the learner's module in a child process."""

    def __init__(self, run: "_Run") -> None:
        self._run = run
        self._proc: LearnerProcess | None = None
        self._failure: LearnerFailure | None = None
        self._loaded_path = ""
        # A request may run on another thread (`checking.side_by_side`) and still be
        # starting the child when the run is closed (Ctrl-C): no child may outlive it.
        self._lock = threading.Lock()
        self._closed = False
        self._restarts = 0
        self._earlier_output = ""

    def _process(self) -> LearnerProcess:
        if self._failure is not None:
            raise self._failure
        if self._proc is None:
            run = self._run
            ahead = getattr(run, "ahead", False)
            if ahead and self._closed:  # a run ahead that was stopped starts no process of its own
                raise LearnerFailure("check_error", _("the check run was stopped."))
            if ahead:
                proc = run.session._ahead_child(run.learner_file, run.child_env, fresh=bool(self._restarts))
            elif self._restarts:
                proc = run.session._fresh_child(run.learner_file, run.child_env)
            else:
                proc = run.session._take_child(run.child_env)
            with self._lock:
                if self._closed:
                    proc.close()
                    raise LearnerFailure("check_error", _("the check run was stopped."))
                self._proc = proc
            t0 = time.monotonic()
            self._proc.wait_ready(t0 + READY_TIMEOUT)
            self._loaded_path = self._proc.stage(run.learner_file)
            try:
                self._request({"op": "load", "path": self._loaded_path, "display": run.display,
                               "module": run.learner_file.stem}, _("while importing your file"))
            except LearnerFailure as f:
                self._failure = f
                raise
        return self._proc

    def _request(self, msg: dict, during: str, pauses: dict[str, float] | None = None) -> Any:
        run = self._run
        remaining = run.budget - run.learner_time
        if remaining <= 0:
            raise LearnerFailure("timeout", _("your code used up the {budget} s allowed for this exercise.").format(
                budget=f"{run.budget:g}"))
        assert self._proc is not None
        t0 = time.monotonic()
        # The child writes its stacks a little before the limit, so a timeout can name the running line.
        msg = {**msg, "dump_after": max(0.1, remaining - min(1.0, remaining * 0.1))}
        try:
            return self._proc.request(msg, t0 + remaining, during=during, pauses=pauses)
        except LearnerFailure as f:
            # The child says it in English; the same lines are built here in the learner's language.
            said = render(f.details.pop("words", None))
            said = said[:20000] if said else said
            if said:
                f.message = said
            if f.cause == "timeout":
                f.message = _("your code took longer than the {budget:g} s allowed {during}.").format(
                    budget=run.budget, during=during)
                running = _running_line(f.details.get("stack"), self._loaded_path, run.learner_file, run.display)
                if running:
                    f.message += "\n" + _("It was running {where}").format(where=running)
            elif f.cause == "exception":
                _befriend(f, run)
            _place(f, run, self._loaded_path)
            if not self._proc.alive():
                self._failure = f  # the process is gone: every later call fails the same way
            raise
        finally:
            run.learner_time += time.monotonic() - t0

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._process()
        self._run.note("call")
        return self._request({"op": "call", "name": name, **encode_args(args, kwargs)}, _("in `{name}`").format(
            name=name))

    def probe(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        self._process()
        self._run.note("probe")
        msg = {"op": "probe", "fn": fn.__name__, "source": _probe_source(fn), **encode_args(args, kwargs)}
        return self._request(msg, _("while the check ran `{name}` on your code").format(name=fn.__name__))

    def probe_with_pauses(self, pauses: dict[str, float], fn: Any, *args: Any, **kwargs: Any) -> Any:
        """`probe`, with waits whose lengths stay on this side: the probe's code calls
        `course.engine.child.pause(name)` and returns after `pauses[name]` seconds."""
        self._process()
        self._run.note("probe")
        msg = {"op": "probe", "fn": fn.__name__, "source": _probe_source(fn), **encode_args(args, kwargs)}
        return self._request(msg, _("while the check ran `{name}` on your code").format(name=fn.__name__),
                             pauses=pauses)

    def has(self, name: str) -> bool:
        self._process()
        self._run.note("has")
        return bool(self._request({"op": "has", "name": name}, _("while looking up names")))

    def restart(self) -> None:
        """End the learner's process; the next request imports the learner's file in a new one.

        For evidence that must come from a process that never saw what the check
        sent before (a checkpoint restored from its files alone, an order that
        depends on nothing computed earlier). The new process shares nothing
        writable with the old one: in a sandbox its /tmp and home are its own, and
        it runs without the learner's compilation cache, the one folder learner
        processes share.
        """
        with self._lock:
            proc, self._proc = self._proc, None
            self._restarts += 1
        if proc is not None:
            proc.close()
            self._earlier_output += proc.output()

    def output(self) -> str:
        return self._earlier_output + (self._proc.output() if self._proc is not None else "")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            proc = self._proc
        if proc is not None:
            proc.close()


# What an error the checks provoke on purpose means, when the check module says nothing (MESSAGES).
DEFAULT_MESSAGES = {
    "KeyReuseError": N_(
        "your code used a PRNG key that had already been used (the check runs it with "
        "jax.debug_key_reuse on). In JAX every key is used once: split it with jax.random.split "
        "(or derive one with jax.random.fold_in) and give each random call a new key."
    ),
}


def _place(f: LearnerFailure, run: "_Run", loaded: str) -> None:
    """Where in the learner's file the failure happened, kept as fields of the failure (`file`,
    `line`) for the result. The child's word is only a number, kept when it is a line of the file."""
    line = f.details.get("line")
    if f.cause == "timeout":
        line = _running_number(f.details.get("stack"), loaded)
    try:
        count = len(run.learner_file.read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        count = 0
    if isinstance(line, int) and not isinstance(line, bool) and 0 < line <= count:
        f.details["file"], f.details["line"] = run.display, line
    else:
        f.details.pop("line", None)


def _befriend(f: LearnerFailure, run: "_Run") -> None:
    """An error the check provoked on purpose gets the check's own words, and the learner's line."""
    error = f.details.get("error")
    friendly = run.settings.messages.get(error) if isinstance(error, str) else None
    friendly = friendly or (DEFAULT_MESSAGES.get(error) if isinstance(error, str) else None)
    if not friendly:
        return
    line = f.details.get("line")
    where = _source_line(run.learner_file, run.display, line) if isinstance(line, int) else ""
    f.message = _(friendly) + ("\n" + _("It happened at {where}").format(where=where) if where else "")


def _source_line(path: Path, display: str, line: int) -> str:
    """`line N of <file>: <source>`, the source read here (the child's word is only the number)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    source = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return _("line {line} of {file}").format(line=line, file=display) + (f": {source}" if source else "")


def _running_line(stack: Any, loaded: str, path: Path, display: str) -> str:
    """The innermost line of the learner's file in a faulthandler dump of the child."""
    number = _running_number(stack, loaded)
    return _source_line(path, display, number) if number is not None else ""


def _running_number(stack: Any, loaded: str) -> int | None:
    """The number of that line (None: the dump names no line of the learner's file)."""
    if not isinstance(stack, str) or not loaded:
        return None
    prefix = f'File "{loaded}", line '
    for row in stack.splitlines():  # most recent call first
        row = row.strip()
        if row.startswith(prefix):
            number = row[len(prefix):].split(" ", 1)[0]
            if number.isdigit():
                return int(number)
    return None


class ReferenceError_(Exception):
    """The reference solution itself failed: a problem with the course, not the learner."""


class ReferenceProxy:
    """`reference` in checks: the reference solution, imported in this (trusted) process.

    Results are kept by exact input (`_ResultCache`), so a check that asks the
    same question again (a fixed case, a replayed seed) does not pay twice.
    Anything the reference raises is the course's fault, never the learner's.
    """

    def __init__(self, module: Any, identity: str = "", cache: "_ResultCache | None" = None) -> None:
        self._module = module
        self._identity = identity
        self._cache = cache

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._answer(("call", name), lambda a, k: getattr(self._module, name)(*a, **k), args, kwargs,
                            f"the reference `{name}`")

    def probe(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return self._answer(("probe", fn.__name__, _probe_source(fn)), lambda a, k: fn(self._module, *a, **k),
                            args, kwargs, f"the reference `{fn.__name__}`")

    def has(self, name: str) -> bool:
        return hasattr(self._module, name)

    def _answer(self, what: tuple, compute: Any, args: tuple, kwargs: dict, where: str) -> Any:
        # The reference gets exactly what the learner gets: plain data, decoded afresh.
        wire = encode_args(args, kwargs)
        key = None
        if self._cache is not None:
            key = _result_key(self._identity, what, wire)
            hit = self._cache.get(key)
            if hit is not None:
                return from_wire(hit)
        try:
            value = compute(from_wire(wire["args"]), from_wire(wire["kwargs"]))
            plain = to_plain(value, where=where)
        except Exception as e:  # noqa: BLE001 - skips (BaseException) pass through
            raise ReferenceError_(_reference_failure(e, where)) from e
        if key is not None:
            self._cache.put(key, to_wire(plain))
        return plain


def _reference_failure(e: BaseException, where: str) -> str:
    import traceback

    tail = traceback.format_exception(type(e), e, e.__traceback__)
    text = "".join(tail[-6:]).strip()
    return (f"{where} raised {type(e).__name__}: {str(e)[:500]}. This is a problem in the course itself, "
            f"not in your code; please report it.\n{text[-2000:]}")


def _result_key(identity: str, what: tuple, wire: dict) -> str:
    import json

    import jax

    h = hashlib.sha256()
    for part in (identity, *what, str(jax.config.jax_enable_x64)):
        h.update(str(part).encode("utf-8", "surrogateescape") + b"\0")
    h.update(json.dumps(wire, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


class _ResultCache:
    """Reference results as wire data, by key; the oldest go first past `max_bytes`."""

    def __init__(self, max_bytes: int = 64 * 1024 * 1024) -> None:
        from collections import OrderedDict

        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[Any, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.hits = 0

    def get(self, key: str) -> Any:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[0]

    def put(self, key: str, wire: Any) -> None:
        import json

        size = len(json.dumps(wire, separators=(",", ":")))
        if size > self.max_bytes // 4:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = (wire, size)
            self._size += size
            while self._size > self.max_bytes:
                _key, (_wire, old) = self._entries.popitem(last=False)
                self._size -= old


class ChildReferenceProxy:
    """The reference in its own (trusted) child, for checks that set CHILD_ENV:
    the environment (e.g. a forced device count) must be set before JAX starts,
    and this process's JAX has started already."""

    def __init__(self, run: "_Run") -> None:
        self._run = run
        self._proc: LearnerProcess | None = None

    def _send(self, msg: dict) -> Any:
        deadline = time.monotonic() + READY_TIMEOUT
        try:
            if self._proc is None:
                session, run = self._run.session, self._run
                self._proc = (session._ahead_child(run.learner_file, run.child_env, trusted=True) if run.ahead
                              else session._take_trusted_child(run.child_env))
                self._proc.request({"op": "load", "path": str(self._run.solution_file),
                                    "module": self._run.solution_file.stem}, deadline, during="loading")
            return self._proc.request(msg, deadline, during="in the reference solution")
        except LearnerFailure as f:
            raise ReferenceError_(f"the reference solution failed ({f.cause}): {f.message}") from None

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return self._send({"op": "call", "name": name, **encode_args(args, kwargs)})

    def probe(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        return self._send({"op": "probe", "fn": fn.__name__, "source": _probe_source(fn), **encode_args(args, kwargs)})

    def has(self, name: str) -> bool:
        return bool(self._send({"op": "has", "name": name}))

    def close(self) -> None:
        if self._proc is not None:
            self._proc.close()


_PROBE_SOURCES: dict[Any, str] = {}


def _probe_source(fn: Any) -> str:
    if fn not in _PROBE_SOURCES:
        if not inspect.isfunction(fn) or fn.__qualname__ != fn.__name__:
            raise TypeError(f"a probe must be a top-level function of the check module, not {fn!r}")
        _PROBE_SOURCES[fn] = textwrap.dedent(inspect.getsource(fn))
    return _PROBE_SOURCES[fn]


# -- one run ---------------------------------------------------------------------


class _Run:
    """The plugin named `jaxlings-run`: what the fixtures in conftest.py hand to checks."""

    def __init__(self, session: Any, exercise: Exercise, learner_file: Path, solution_file: Path,
                 seed: int, budget: float, child_env: dict[str, str], display: str,
                 settings: CheckSettings = CheckSettings(), ahead: bool = False) -> None:
        self.session = session
        self.ahead = ahead  # a check run ahead (`course.engine.ahead`): children of its own
        self.settings = settings
        self.exercise = exercise
        self.learner_file = learner_file
        self.solution_file = solution_file
        self.seed = seed
        self.budget = budget
        self.learner_time = 0.0
        self.child_env = child_env
        self.display = display
        self.learner = LearnerProxy(self)
        self._reference: Any = None
        self.trace: dict[str, dict[str, int]] = {}
        self._test = ""
        self._programs_before = 0

    def note(self, what: str) -> None:
        """Count one request of the test now running (ExerciseResult.trace)."""
        counts = self.trace.setdefault(self._test, {"call": 0, "probe": 0, "has": 0, "programs": 0})
        counts[what] = counts.get(what, 0) + 1

    def begin_test(self, name: str) -> None:
        from course.engine import programs

        self._test = name
        self.trace.setdefault(name, {"call": 0, "probe": 0, "has": 0, "programs": 0})
        self._programs_before = programs.REQUESTS_DONE

    def end_test(self) -> None:
        from course.engine import programs

        self.trace[self._test]["programs"] += programs.REQUESTS_DONE - self._programs_before
        self._programs_before = programs.REQUESTS_DONE

    @property
    def reference(self) -> Any:
        if self._reference is None:
            if self.child_env:
                self._reference = ChildReferenceProxy(self)
            else:
                module, identity = self.session._reference_module(self.solution_file)
                cache = self.session._reference_results if self.settings.cache_reference else None
                self._reference = ReferenceProxy(module, identity, cache)
        return self._reference

    def close(self) -> None:
        self.learner.close()
        if isinstance(self._reference, ChildReferenceProxy):
            self._reference.close()

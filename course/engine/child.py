"""The learner's process: loads one learner module and answers calls on it.

Started by `course.engine.sandbox` as `python -I course/engine/child.py [--memory-mb N]
[--preload]`. It speaks a tiny protocol over its original stdin/stdout
(length-prefixed JSON frames); the learner's code gets /dev/null as stdin and
stderr as stdout, so a stray `print` can never corrupt the protocol. Whatever
the learner's code does here, the parent only ever receives plain data
(`course.engine.wire`), and it decides the verdict.

Nothing here is trusted by the parent: a learner can make this process send
any bytes it likes. That is fine because the parent treats every reply as the
learner's claimed result and compares it against the reference itself.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":
    # Run as a script with -I: make the `course` package importable without
    # putting the learner's folder or the current directory on sys.path.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    # One module, whichever name imports it: a probe's `from course.engine.child import pause`
    # must reach the protocol this script set up.
    sys.modules.setdefault("course.engine.child", sys.modules[__name__])

import faulthandler
import inspect
import json
import linecache
import resource
import struct
import traceback
import types
from typing import Any

from course.engine.words import say

HEADER = struct.Struct("!Q")
MAX_MESSAGE = 1 << 30
MAX_MESSAGE_TEXT = 2000
PROBE_FILE = "<check probe>"


def read_frame(fd: int) -> bytes | None:
    head = _read_exact(fd, HEADER.size)
    if head is None:
        return None
    (n,) = HEADER.unpack(head)
    if n > MAX_MESSAGE:
        raise ValueError(f"message of {n} bytes is too large")
    return _read_exact(fd, n)


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def write_frame(fd: int, payload: bytes) -> None:
    data = HEADER.pack(len(payload)) + payload
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


_PROTOCOL: tuple[int, int] | None = None  # (in, out): the frames to and from the parent
# This process's exit status when the learner's code closed the descriptors it talks to the
# parent through: the parent says so, rather than that the code exited or crashed.
CHANNEL_CLOSED = 74


def pause(name: str) -> None:
    """Wait until the parent says to go on: it holds the length of wait `name` (see
    `LearnerProcess.request`), so nothing in this process knows how long it lasts."""
    if _PROTOCOL is None:
        raise RuntimeError("pause() needs the parent's protocol")
    proto_in, proto_out = _PROTOCOL
    write_frame(proto_out, json.dumps({"pause": name}).encode())
    frame = read_frame(proto_in)
    if frame is None or json.loads(frame) != {"resumed": name}:
        raise RuntimeError(f"the parent did not resume wait {name!r}")


class Failure(Exception):
    def __init__(self, cause: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.cause = cause
        self.message = message
        self.extra = extra


def _english(phrase: str) -> str:
    return phrase


def _said(cause: str, lines: list, **extra: Any) -> Failure:
    """A failure told in `course.engine.words` lines: the English here, the learner's
    language where the parent builds it from `words` (this process has no translations)."""
    from course.engine.words import render

    return Failure(cause, render(lines, _english) or "", words=lines, **extra)


class Child:
    def __init__(self) -> None:
        self.module: types.ModuleType | None = None
        self.path = ""
        self.display = ""

    # -- operations ----------------------------------------------------------
    def op_load(self, msg: dict) -> Any:
        self.path = str(msg["path"])
        self.display = str(msg.get("display") or self.path)
        try:
            with open(self.path, "rb") as f:
                source = f.read()
        except OSError as e:
            raise _said("import_error", [say("cannot read {file}: {error}", file=self.display,
                                             error=str(e.strerror or e))]) from None
        # Strict, like the editor and `course.workspace.read_source`: a file that is not
        # UTF-8 fails here, before any of its code runs, even where compile() would let
        # a stray byte in a comment through.
        from course.engine.source_text import first_non_utf8, utf8_problem

        bad = first_non_utf8(source)
        if bad is not None:
            raise Failure("syntax_error", utf8_problem(source, self.display), line=bad[0])
        text = source.decode("utf-8")
        # Keep the source in linecache so tracebacks show the learner's lines even
        # if the file changes or disappears while the check runs (mtime None = keep).
        linecache.cache[self.path] = (len(text), None, text.splitlines(True), self.path)
        try:
            code = compile(source, self.path, "exec", dont_inherit=True)
        except SyntaxError as e:
            raise _said("syntax_error", self._syntax_message(e), line=e.lineno) from None
        except ValueError as e:  # e.g. null bytes in the source
            raise _said("syntax_error", [say("{file} cannot be compiled: {error}", file=self.display,
                                             error=str(e))]) from None
        name = str(msg.get("module") or "learner")
        if name in sys.modules:  # e.g. a file named like a library the course already imported
            name = f"learner_{name}"
        module = types.ModuleType(name)
        module.__file__ = self.path
        sys.modules[name] = module
        try:
            exec(code, module.__dict__)
        except ModuleNotFoundError as e:
            raise _said(
                "import_error",
                [say("{file} imports `{name}`, which is not installed or does not exist.",
                     file=self.display, name=str(e.name))] + self._trimmed(e),
                missing=e.name, line=self._learner_line(e),
            ) from None
        except ImportError as e:
            raise _said("import_error", [say("an import in {file} failed.", file=self.display)]
                        + self._trimmed(e), line=self._learner_line(e)) from None
        except BaseException as e:  # noqa: BLE001 - everything the learner's import can raise
            raise self._failure_from(e, say("while importing {file}", file=self.display)) from None
        self.module = module
        return None

    def op_has(self, msg: dict) -> Any:
        return hasattr(self._module(), str(msg["name"]))

    def op_call(self, msg: dict) -> Any:
        from course.engine.wire import from_wire

        name = str(msg["name"])
        module = self._module()
        if not hasattr(module, name):
            raise _said("missing_name", [say("{file} does not define `{name}`.", file=self.display, name=name)],
                        name=name)
        fn = getattr(module, name)
        if not callable(fn):
            raise _said(
                "missing_name",
                [say("`{name}` in {file} is a {type}, but the check calls it.", name=name, file=self.display,
                     type=type(fn).__name__)],
                name=name,
            )
        args = from_wire(msg.get("args", {"l": []}))
        kwargs = from_wire(msg.get("kwargs", {"d": {}}))
        _check_signature(fn, name, args, kwargs)
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001
            raise self._failure_from(e, say("while running `{name}`", name=name)) from None
        return self._plain(result, f"the value returned by `{name}`",
                           say("while converting the value returned by `{name}`", name=name))

    def op_probe(self, msg: dict) -> Any:
        from course.engine.wire import from_wire

        module = self._module()
        fn_name = str(msg["fn"])
        namespace: dict[str, Any] = {"__name__": "jaxlings_probe"}
        source = str(msg["source"])
        linecache.cache[PROBE_FILE] = (len(source), None, source.splitlines(True), PROBE_FILE)
        exec(compile(source, PROBE_FILE, "exec"), namespace)
        args = from_wire(msg.get("args", {"l": []}))
        kwargs = from_wire(msg.get("kwargs", {"d": {}}))
        try:
            result = namespace[fn_name](module, *args, **kwargs)
        except BaseException as e:  # noqa: BLE001
            raise self._failure_from(e, say("while the check used your code")) from None
        return self._plain(result, "the value the check got from your code",
                           say("while converting the value the check got from your code"))

    # -- helpers -------------------------------------------------------------
    def _module(self) -> types.ModuleType:
        if self.module is None:
            raise _said("import_error", [say("the learner's module is not loaded")])
        return self.module

    def _plain(self, value: Any, where: str, during: list) -> Any:
        from course.engine.wire import NotPlainData, to_plain

        try:
            return to_plain(value, where=where)
        except NotPlainData as e:
            raise Failure("not_plain_data", str(e)) from None
        except BaseException as e:  # noqa: BLE001 - a rigged __array__ or property can raise
            raise self._failure_from(e, during) from None

    def _failure_from(self, e: BaseException, during: list) -> Failure:
        """`during`: a `say()` of one of the {during} phrases of `course.engine.words`."""
        if isinstance(e, Failure):
            return e
        if isinstance(e, SystemExit):
            return _said("exit", [say("your code called sys.exit({code}) {during}.", code=_short_repr(e.code),
                                      during=during)], code=_exit_code(e.code))
        if isinstance(e, MemoryError) or "RESOURCE_EXHAUSTED" in str(e)[:500]:
            return _said("out_of_memory", [say("your code ran out of memory {during}.", during=during)]
                         + self._trimmed(e))
        if isinstance(e, (RuntimeError, OSError)) and any(t in str(e)[:200] for t in TOO_MANY_TASKS):
            limit = resource.getrlimit(resource.RLIMIT_NPROC)[0]
            if limit != resource.RLIM_INFINITY:
                return _said("exception", [say("{error} {during}: your code started more threads and processes "
                                               "than the {limit} allowed.", error=type(e).__name__, during=during,
                                               limit=limit)] + self._trimmed(e), error=type(e).__name__)
        extra: dict[str, Any] = {"error": type(e).__name__}
        line = self._learner_line(e)
        if line is not None:
            extra["line"] = line
        return _said("exception", [say("{error} {during}.", error=type(e).__name__, during=during)]
                     + self._trimmed(e), **extra)

    def _learner_frames(self, e: BaseException) -> list[traceback.FrameSummary]:
        return [f for f in traceback.extract_tb(e.__traceback__) if f.filename in (self.path, PROBE_FILE)]

    def _learner_line(self, e: BaseException) -> int | None:
        lines = [f.lineno for f in self._learner_frames(e) if f.filename == self.path]
        return lines[-1] if lines else None

    def _trimmed(self, e: BaseException) -> list:
        """The traceback reduced to the learner's own lines (and the check's probe).

        JAX already hides its own frames from tracebacks and says so in a note
        about JAX_TRACEBACK_FILTERING; here every frame outside the learner's
        file is gone, so that note (and JAX's separator line) is only noise.
        """
        lines = []
        frames = self._learner_frames(e)
        if frames:
            lines.append(say("Traceback (your code):"))
            for f in frames:
                if f.filename == self.path:
                    lines.append(say("  {file}, line {line}, in {function}", file=self.display, line=f.lineno,
                                     function=f.name))
                else:
                    lines.append(say("  the check, line {line}, in {function}", line=f.lineno, function=f.name))
                if f.line:
                    lines.append(f"    {f.line.strip()}")
        lines.extend(self._rules_named_in(e))
        text = _exception_text(e)
        if len(text) > MAX_MESSAGE_TEXT:
            text = text[:MAX_MESSAGE_TEXT] + " [...]"
        lines.append(text.replace(self.path, self.display) if self.path else text)
        return lines

    def _rules_named_in(self, e: BaseException) -> list:
        """Where the learner defined the custom rule an error is about.

        JAX checks a custom_vjp's backward rule after the rule has returned,
        so no frame of the learner's file is left in the traceback; the rule
        itself is still registered on the learner's function."""
        text = str(e)[:2000].lower()
        if "custom vjp" not in text and "custom_vjp" not in text and "custom jvp" not in text \
                and "custom_jvp" not in text:
            return []
        named = [a for a in ("fwd", "bwd", "jvp") if f"{a} rule" in text or f"{a} function" in text]
        found = []
        for value in list(vars(self.module).values()) if self.module is not None else []:
            for attr in named or ("fwd", "bwd", "jvp"):
                rule = _instance_attr(value, attr)
                code = getattr(rule, "__code__", None) if inspect.isfunction(rule) else None
                if code is not None and code.co_filename == self.path:
                    source = linecache.getline(self.path, code.co_firstlineno).strip()
                    found.append(say("  {file}, line {line}: the {rule} rule `{name}`", file=self.display,
                                     line=code.co_firstlineno, rule=attr, name=str(rule.__name__)))
                    if source:
                        found.append(f"    {source}")
        if found:
            found.insert(0, say("Your custom rules:"))
        return found

    def _syntax_message(self, e: SyntaxError) -> list:
        lines: list = [say("{file}, line {line}: {error}", file=self.display, line=e.lineno if isinstance(e.lineno, int) else "?",
                           error=str(e.msg))]
        if e.text:
            text = e.text.rstrip("\n")
            stripped = text.lstrip()
            lines.append("    " + stripped)
            if e.offset:
                col = max(0, e.offset - 1 - (len(text) - len(stripped)))
                width = 1
                if e.end_offset and e.end_lineno == e.lineno and e.end_offset > e.offset:
                    width = e.end_offset - e.offset
                lines.append("    " + " " * col + "^" * width)
        return lines

    # -- main loop -----------------------------------------------------------
    def handle(self, msg: dict) -> dict:
        from course.engine.wire import NotPlainData, to_wire

        op = getattr(self, "op_" + str(msg.get("op")), None)
        if op is None:
            return {"ok": False, "cause": "check_error", "message": f"unknown operation {msg.get('op')!r}"}
        # Just before the parent's time limit, every thread's stack goes to stderr (which the
        # parent drains), written by faulthandler's own thread: a timeout can then name the
        # line that was running, however the learner's code is stuck.
        dump_after = msg.get("dump_after")
        if type(dump_after) in (int, float) and 0 < dump_after < 1e6:
            faulthandler.dump_traceback_later(dump_after, file=sys.stderr)
        try:
            value = op(msg)
            return {"ok": True, "value": to_wire(value)}
        except Failure as f:
            return {"ok": False, "cause": f.cause, "message": f.message, **f.extra}
        except NotPlainData as e:
            return {"ok": False, "cause": "not_plain_data", "message": str(e)}
        except BaseException as e:  # noqa: BLE001 - report, never die silently
            return {"ok": False, **_as_dict(self._failure_from(e, say("in the check")))}
        finally:
            faulthandler.cancel_dump_traceback_later()


def _instance_attr(value: Any, attr: str) -> Any:
    """A rule stored on a custom_vjp / custom_jvp object (instance attributes only)."""
    try:
        return object.__getattribute__(value, "__dict__").get(attr)
    except Exception:  # noqa: BLE001 - no __dict__, or a hostile one
        return None


def _exception_text(e: BaseException) -> str:
    """`Type: message` and the exception's notes, without JAX's note on traceback filtering."""
    try:
        head = "".join(traceback.format_exception_only(type(e), e)).strip()
    except Exception:  # noqa: BLE001 - a learner's exception with a broken __str__
        head = type(e).__name__
    kept = [line for line in head.splitlines()
            if "JAX_TRACEBACK_FILTERING" not in line and set(line.strip()) != {"-"}]
    return "\n".join(kept).strip()


def _as_dict(f: Failure) -> dict:
    return {"cause": f.cause, "message": f.message, **f.extra}


def _short_repr(value: Any) -> str:
    try:
        return repr(value)[:200]
    except Exception:  # noqa: BLE001 - a learner's object with a broken __repr__
        return type(value).__name__


def _exit_code(code: Any) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def _check_signature(fn: Any, name: str, args: Any, kwargs: Any) -> None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # builtins and C callables: let the call itself say what is wrong
    try:
        sig.bind(*args, **kwargs)
    except TypeError as e:
        shown = ", ".join([_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()])
        raise _said(
            "signature",
            [say("`{name}{signature}` cannot be called the way the check calls it: {name}({arguments}).",
                 name=name, signature=str(sig), arguments=shown), str(e)],
            name=name,
        ) from None


def _short(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None:
        return f"<array {getattr(value, 'dtype', '')}{list(shape)}>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _set_memory_limit(mb: int) -> None:
    # RLIMIT_DATA, not RLIMIT_AS: XLA reserves gigabytes of address space it
    # never touches, so an address-space limit breaks `import jax`. RLIMIT_DATA
    # counts private writable memory (heap, anonymous mmap) on Linux >= 4.7;
    # a 512 MiB limit still lets jax + flax + optax import and run. The parent
    # also polls this process's RSS and kills it past the limit, for memory
    # that RLIMIT_DATA does not count.
    limit = mb * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    except (ValueError, OSError):
        pass  # the RSS watch in the parent still applies


def _set_task_limit(tasks: int) -> None:
    # RLIMIT_NPROC: this process's threads and processes together (counted per user
    # namespace in a sandbox, per uid in the `uid` tier), so a learner starting threads
    # in a loop stops here and not at the host's pid_max. Both soft and hard: graded
    # code holds no capability to raise it.
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))
    except (ValueError, OSError):
        pass


TOO_MANY_TASKS = ("can't start new thread", "Resource temporarily unavailable")


# Libraries a child may import ahead of time when the parent names them
# (JAXLINGS_PRELOAD): the heavy ones some exercises use.
PRELOADABLE = ("flax.linen", "orbax.checkpoint", "pandas", "torch", "torch.utils.data")


def _preload() -> None:
    import importlib

    import numpy  # noqa: F401
    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401
    from flax import nnx  # noqa: F401

    # Start the backend now so the first learner call does not pay for it.
    jax.block_until_ready(jax.jit(lambda x: x + 1)(jnp.zeros(2)))
    for name in os.environ.get("JAXLINGS_PRELOAD", "").split(","):
        if name in PRELOADABLE:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the learner's own import will say what is wrong
                pass


def _die_with_parent() -> None:
    # If the engine dies (killed app, crashed grader), a learner's infinite loop
    # must not keep running. PR_SET_PDEATHSIG would fire when the *thread* that
    # started us ends (the app starts children from worker threads), so watch
    # for being re-parented instead.
    import threading

    parent = os.getppid()

    def watch() -> None:
        import time

        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(70)

    threading.Thread(target=watch, name="jaxlings-parent-watch", daemon=True).start()


def main(argv: list[str]) -> int:
    global _PROTOCOL
    _die_with_parent()
    proto_in, proto_out = os.dup(0), os.dup(1)
    _PROTOCOL = (proto_in, proto_out)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)  # the learner's print() goes to stderr, which the parent drains
    if "--memory-mb" in argv:
        _set_memory_limit(int(argv[argv.index("--memory-mb") + 1]))
    if "--max-tasks" in argv:
        _set_task_limit(int(argv[argv.index("--max-tasks") + 1]))
    ready: dict[str, Any] = {"ready": True, "pid": os.getpid()}
    if "--preload" in argv:
        try:
            _preload()
        except BaseException as e:  # noqa: BLE001 - the parent reports a broken install
            ready = {"ready": False, "message": f"cannot import the course libraries: {e!r}"}
    write_frame(proto_out, json.dumps(ready).encode())
    child = Child()
    while True:
        try:
            frame = read_frame(proto_in)
        except OSError:
            return CHANNEL_CLOSED
        if frame is None:
            return 0
        msg = json.loads(frame)
        if msg.get("op") == "bye":
            return 0
        reply = child.handle(msg)
        try:
            payload = json.dumps(reply, separators=(",", ":")).encode()
        except (TypeError, ValueError) as e:
            payload = json.dumps({"ok": False, "cause": "not_plain_data", "message": str(e)}).encode()
        sys.stdout.flush()
        try:
            write_frame(proto_out, payload)
        except OSError:
            return CHANNEL_CLOSED


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: atexit hooks and JAX's shutdown are not needed.
    os._exit(code)

"""Run the lab in a child process: what the course app uses.

    report = run_lab_in_child(LabConfig(...), on_progress=..., cancel=threading.Event())

Same contract as `course.lab.api.run_lab`, but the training runs in its own
Python process, so that a front end drawing a screen in the same process does
not take the interpreter from the training loops (which would slow the eager
and per-step variants and make their times dishonest), and so that a crash in
JAX, PyTorch or a GPU driver ends the run, not the front end.

The parent writes the config as one JSON line to the child's stdin, then
"stop" when `cancel` is set; the child treats a closed stdin as "stop" too, so
it never outlives a parent that died. The child writes JSON lines to a pipe of
its own (never stdout, where libraries may print): {"progress": {...}} after
epochs, then {"report": LabReport.to_dict()} or {"error": {"type", "message"}}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from course.lab.api import LabConfig, LabConfigError, LabReport, Progress


class LabChildError(RuntimeError):
    """The child process ended without a report; the message has its last words."""


def run_lab_in_child(
    config: LabConfig,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    python: str | None = None,
    env: dict[str, str] | None = None,
) -> LabReport:
    """Raises `LabConfigError` or `course.titanic.TitanicDataError` for bad settings or
    data (as `run_lab` does), `LabChildError` if the child dies without a report."""
    from course.titanic import TitanicDataError

    config.validate()  # a bad setting fails here, before a process starts
    read_fd, write_fd = os.pipe()
    try:
        proc = subprocess.Popen(
            [python or sys.executable, "-m", "course.lab.child", str(write_fd)],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            pass_fds=(write_fd,), env=env, text=True,
        )
    finally:
        os.close(write_fd)
    stderr_tail: deque[str] = deque(maxlen=40)
    drain = threading.Thread(target=lambda: stderr_tail.extend(proc.stderr), daemon=True)
    drain.start()
    done = threading.Event()

    def forward_stop() -> None:
        while not done.is_set():
            if cancel is not None and cancel.wait(0.1):
                _send(proc, "stop")
                return

    assert proc.stdin is not None
    _send(proc, json.dumps(asdict(config)))
    stopper = threading.Thread(target=forward_stop, daemon=True)
    stopper.start()
    report: LabReport | None = None
    error: dict[str, str] | None = None
    try:
        with os.fdopen(read_fd, encoding="utf-8") as events:
            for line in events:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if "progress" in event and on_progress is not None:
                    on_progress(Progress(**event["progress"]))
                elif "report" in event:
                    report = LabReport.from_dict(event["report"])
                elif "error" in event:
                    error = event["error"]
    finally:
        done.set()
        if proc.poll() is None and report is None:
            proc.kill()
        try:
            proc.stdin.close()
        except OSError:
            pass
        proc.wait()
        drain.join(timeout=5)
    if report is not None:
        return report
    if error is not None:
        kind = TitanicDataError if error.get("type") == "TitanicDataError" else LabConfigError
        raise kind(error.get("message", "the lab could not start"))
    last_words = "".join(stderr_tail).strip()
    raise LabChildError(
        f"the training process ended with exit code {proc.returncode} before it finished"
        + (f":\n{last_words}" if last_words else ".")
    )


def _send(proc: subprocess.Popen, line: str) -> None:
    try:
        assert proc.stdin is not None
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    except (OSError, ValueError):
        pass  # the child has gone; its end is reported from the event pipe


def _child_main(event_fd: int) -> int:
    from course.lab.api import run_lab
    from course.titanic import TitanicDataError

    events = os.fdopen(event_fd, "w", encoding="utf-8", buffering=1)
    # Variants train in threads of their own (they take turns, but after Stop they end at once).
    lock = threading.Lock()

    def emit(kind: str, payload: Any) -> None:
        line = json.dumps({kind: payload}) + "\n"
        with lock:
            events.write(line)

    config = LabConfig(**json.loads(sys.stdin.readline()))
    cancel = threading.Event()

    def watch_stdin() -> None:
        for line in sys.stdin:
            if line.strip() == "stop":
                break
        cancel.set()  # "stop", or the parent closed stdin (or died)

    threading.Thread(target=watch_stdin, daemon=True).start()
    try:
        report = run_lab(config, on_progress=lambda p: emit("progress", asdict(p)), cancel=cancel)
    except (LabConfigError, TitanicDataError) as exc:
        emit("error", {"type": type(exc).__name__, "message": str(exc)})
        return 2
    emit("report", report.to_dict())
    events.close()
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(int(sys.argv[1])))

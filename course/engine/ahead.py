"""The next check of an exercise, run ahead while the learner edits.

A long-lived session (the app, the check server) draws the seed of an
exercise's next check as soon as one check is over (or the exercise is opened),
and runs that check at once, in the background, on the learner's file as it
stands, in a learner child of its own. Its verdict is thrown away; what it
leaves is what the real check would otherwise pay for when the learner saves:

- the reference's answers for that seed's inputs, kept by exact input in the
  session's result cache (so the reference costs nothing the second time);
- the trusted side's compiled programs for that seed's shapes (the check's own
  and the reference's), in this process;
- the learner's programs for those shapes in the learner's own compilation
  cache: every eager operation, and every function of the file that the
  learner has not changed since.

The real check then runs as any check does, in a fresh learner child, on the
file as saved, with that seed. Nothing crosses between learners or from the
reference into the learner's cache: the run ahead is a check like the others.
Its inputs are the ones the real check draws, but its verdict and messages are
never shown or handed to the learner's code, so seeing the inputs early gives the
learner's code nothing it would not see anyway.

A check asked for while the run ahead is still going stops it: its learner
child is ended, so every later request of it fails at once, and the real check
starts as soon as pytest has unwound (the reference's answers it already
computed are kept). The grader never runs ahead.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from course.engine.settings import draw_seed


class RunAhead:
    def __init__(self, session: Any) -> None:
        self.session = session
        self._lock = threading.Lock()
        self._seeds: dict[tuple[str, str], int] = {}
        self._thread: threading.Thread | None = None
        self._run: Any = None  # the run going on ahead, once it has one
        self._cancel = threading.Event()

    def seed_for(self, exercise: Any, learner_path: Path) -> int | None:
        """The seed drawn ahead for this exercise's next check (once), or None."""
        with self._lock:
            return self._seeds.pop((exercise.name, str(learner_path)), None)

    def start(self, exercise: Any, learner_path: Path) -> None:
        """Run the next check of `exercise` now, in the background, with a seed drawn for it."""
        self.stop()
        if self.session._closed or not learner_path.is_file():
            return
        seed = draw_seed()
        with self._lock:
            self._seeds = {(exercise.name, str(learner_path)): seed}
            self._cancel = threading.Event()
            self._run = None
            self._thread = threading.Thread(target=self._go, args=(exercise, learner_path, seed, self._cancel),
                                            name="jaxlings-run-ahead", daemon=True)
            self._thread.start()

    def _go(self, exercise: Any, learner_path: Path, seed: int, cancel: threading.Event) -> None:
        if cancel.is_set():
            return
        try:
            self.session._check(exercise, learner_path, seed, ahead=self)
        except Exception:  # noqa: BLE001 - a run ahead that failed only costs the real check its head start
            with self._lock:
                self._seeds.pop((exercise.name, str(learner_path)), None)

    def started(self, run: Any) -> None:
        """Called by the session with the run ahead's `_Run` (under pytest's lock), before any test."""
        with self._lock:
            self._run = run
            stopped = self._cancel.is_set()
        if stopped:
            run.learner.close()

    def stop(self) -> None:
        """End the run ahead, if one is going on, and wait until it has let go of pytest."""
        with self._lock:
            thread, run = self._thread, self._run
            self._cancel.set()
        if run is not None:
            run.learner.close()
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        with self._lock:
            if self._thread is thread:
                self._thread, self._run = None, None

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the run ahead is over (True), or `timeout` passes (False)."""
        with self._lock:
            thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

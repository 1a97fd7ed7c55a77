"""Stopping a grading run cleanly, however often it is asked to.

The first SIGINT (Ctrl+C) or SIGTERM (a batch scheduler's preemption, `kill`)
stops the grading: it raises KeyboardInterrupt in the main thread, where the
pool is waiting. Every later one is only noted: the workers are being stopped,
the work folder removed and the reports written from the finished
submissions, and a second Ctrl+C must not cut that short. SIGKILL cannot be
caught; each submission's result file is written atomically as it finishes,
so `--resume` loses nothing but the submissions in hand.
"""

from __future__ import annotations

import signal
import sys
import threading

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopping:
    def __init__(self) -> None:
        self.requests = 0
        self.stopping = False
        self._previous: dict = {}

    def __enter__(self) -> "Stopping":
        if threading.current_thread() is threading.main_thread():
            for sig in _SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum, frame) -> None:
        self.requests += 1
        if not self.stopping:
            self.stopping = True
            raise KeyboardInterrupt
        if self.requests == 2:
            print("Stopping: writing the reports for the finished submissions, please wait.",
                  file=sys.stderr, flush=True)

    def stop(self) -> None:
        """From now on signals are only noted: what follows must run to the end."""
        self.stopping = True

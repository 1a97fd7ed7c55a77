"""Variants take turns on the machine, round after round.

Timing the variants one after another lets a burst of load (another program, a
build, a browser tab) land on one variant only, and two runs then rank them in
opposite orders. Here every variant trains in a thread of its own, and exactly one
of them holds the machine at a time: at the end of an epoch whose turn is over
(`TrainContext.turn_due`) it hands the machine to the next variant in the list and
waits for its next turn. Each variant's steady-state part of a turn is one timed
round; a burst then hits a round of every variant, and the median over rounds
leaves it out.

A variant's thread starts at its first turn, so after Stop the variants that never
had one are "not started", as in a run where they would have come later.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from course.lab.context import Baton, Cancelled, TrainContext

# How often a waiting variant looks at Stop; a turn handed over wakes it at once.
STOP_POLL_S = 0.1


class RoundRobin(Baton):
    def __init__(self, names: list[str], cancel: threading.Event | None = None) -> None:
        self.names = list(names)
        self.cancel = cancel
        self.started: list[str] = []
        self._live = list(names)
        self._holder: str | None = None
        self._cond = threading.Condition()
        self._threads: dict[str, threading.Thread] = {}
        self._by_thread: dict[int, str] = {}
        self._target: Callable[[str], None] | None = None
        # Who held the machine, turn after turn: what the tests read to see the rounds interleave.
        self.turns: list[str] = []

    def run(self, target: Callable[[str], None]) -> None:
        """Call `target(name)` for every name, each in its own thread, in turns; return when all have ended."""
        self._target = target
        with self._cond:
            self._hand_over(None)
            while any(name in self._live for name in self.started) or self._holder is not None:
                self._cond.wait()
        for thread in list(self._threads.values()):
            thread.join()

    def pass_turn(self, ctx: TrainContext) -> None:
        me = self._by_thread[threading.get_ident()]
        with self._cond:
            self._hand_over(me)
            while self._holder != me:
                if self._stopped():
                    raise Cancelled
                self._cond.wait(STOP_POLL_S)

    def _stopped(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def _hand_over(self, after: str | None) -> None:
        """Give the machine to the next live variant after `after` (the first when None); caller holds the lock."""
        start = 0 if after is None else self.names.index(after) + 1
        for k in range(len(self.names)):
            name = self.names[(start + k) % len(self.names)]
            if name not in self._live:
                continue
            if name not in self.started:
                if self._stopped():
                    self._live.remove(name)  # never started: the caller records it as not run
                    continue
                self._start(name)
            self._holder = name
            self.turns.append(name)
            self._cond.notify_all()
            return
        self._holder = None
        self._cond.notify_all()

    def _start(self, name: str) -> None:
        self.started.append(name)
        thread = threading.Thread(target=self._body, args=(name,), name=f"lab-{name}", daemon=True)
        self._threads[name] = thread
        thread.start()

    def _body(self, name: str) -> None:
        self._by_thread[threading.get_ident()] = name
        try:
            assert self._target is not None
            self._target(name)
        finally:
            with self._cond:
                self._live.remove(name)
                if self._holder == name:
                    self._hand_over(name)
                self._cond.notify_all()

"""What every training variant gets: the data, the settings, a clock, a Stop button.

The clock has four marks, set by the variant at the moments only it knows:

    start ── init ──> ready ── first step (trace + compile) ──> compiled ── steady state ──> done

`compile_s` is ready→compiled (for eager code: the first, warm-up step), the
steady state is compiled→done divided by the steps taken in it, and `total_s`
is start→done. JAX dispatches asynchronously, so `mark_compiled` and
`mark_done` take a `block` callable that waits for the device before the clock
is read: without it we would time the dispatch, not the work.

Variants take turns (`course.lab.rounds`): at the end of an epoch a variant whose
turn is over hands the machine to the next one, so that a burst of load on the
machine lands on every variant, not on whichever happened to be running. The
clock is the variant's own: it stops while the variant waits for its turn. Each
turn's steady-state part is one timed round (`rounds`), and the figures the lab
shows are the median and spread of those rounds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from course.titanic import TitanicSplit


class Cancelled(Exception):
    """Raised inside a variant when Stop was requested; the runner keeps what finished."""


class Baton:
    """What a context asks when its turn is over; `course.lab.rounds.RoundRobin` implements it."""

    def pass_turn(self, ctx: "TrainContext") -> None:  # pragma: no cover - an interface
        raise NotImplementedError


# A turn ends after this share of the variant's epochs (so that every variant is timed
# in at least ROUNDS rounds) or after MAX_TURN_S of its own time, whichever comes first.
ROUNDS = 5
MAX_TURN_S = 0.5


@dataclass
class Timing:
    start: float = 0.0
    ready: float | None = None
    compiled: float | None = None
    done: float | None = None
    steps_at_compile: int = 0


@dataclass
class TrainContext:
    split: TitanicSplit
    epochs: int
    batch_size: int = 32
    learning_rate: float = 1e-3
    hidden: int = 64
    seed: int = 0
    torch_device: str = "cpu"
    cancel: threading.Event | None = None
    # Called as on_epoch(epoch_number_from_1, mean_loss) after each epoch.
    on_epoch: Callable[[int, float], None] | None = None
    losses: list[float] = field(default_factory=list)
    steps: int = 0
    timing: Timing = field(default_factory=Timing)
    # Set by the runner: whom to hand the machine to when a turn is over (None: never).
    baton: Baton | None = None
    # (seconds, steps) of steady-state work in each turn: the timed rounds.
    rounds: list[tuple[float, int]] = field(default_factory=list)
    waited_s: float = 0.0
    _turn_start: float = 0.0
    _turn_steps: int = 0
    _turn_epochs: int = 0

    def clock(self) -> float:
        """This variant's own time: the wall clock, less every wait for its turn."""
        return time.perf_counter() - self.waited_s

    @property
    def round_epochs(self) -> int:
        return max(1, -(-self.epochs // ROUNDS))

    def turn_due(self, ahead: int = 0) -> bool:
        """Whether this turn is over, counting `ahead` epochs dispatched but not yet ended."""
        if self.baton is None:
            return False
        done = len(self.losses) + ahead - self._turn_epochs
        # Time counts from the end of the first step: a long compile is not a turn's work.
        steady_since = max(self._turn_start, self.timing.compiled or self._turn_start)
        return done >= self.round_epochs or self.clock() - steady_since >= MAX_TURN_S

    def _close_round(self, now: float) -> None:
        t = self.timing
        if t.compiled is None:
            return
        start, steps = max(self._turn_start, t.compiled), max(self._turn_steps, t.steps_at_compile)
        if self.steps > steps and now > start:
            self.rounds.append((now - start, self.steps - steps))

    def _open_turn(self) -> None:
        self._turn_start, self._turn_steps, self._turn_epochs = self.clock(), self.steps, len(self.losses)

    def pass_turn(self) -> None:
        """End this turn (one timed round) and wait for the next one; raises Cancelled on Stop."""
        self._close_round(self.clock())
        if self.baton is not None:
            before = time.perf_counter()
            try:
                self.baton.pass_turn(self)
            finally:
                self.waited_s += time.perf_counter() - before
        self._open_turn()

    @property
    def steps_per_epoch(self) -> int:
        # The ragged remainder is dropped in every variant (one batch shape, one compile).
        return self.split.n_train // self.batch_size

    @property
    def dropped_per_epoch(self) -> int:
        return self.split.n_train - self.steps_per_epoch * self.batch_size

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise Cancelled

    def start(self) -> None:
        self.timing.start = self.clock()
        self._open_turn()

    def mark_ready(self) -> None:
        self.timing.ready = self.clock()

    def mark_compiled(self, block: Callable[[], object] | None = None) -> None:
        if block is not None:
            block()
        self.timing.compiled = self.clock()
        self.timing.steps_at_compile = self.steps

    def mark_done(self, block: Callable[[], object] | None = None) -> None:
        if block is not None:
            block()
        self.timing.done = self.clock()
        self._close_round(self.timing.done)

    def end_epoch(self, epoch: int, loss: float, *, can_pass: bool = True) -> None:
        """Record epoch `epoch` (0-based) with its mean batch loss; Stop takes effect here too.

        When the turn is over, the next variant's turn comes here; `can_pass=False` while
        work of this variant is still running on the device (it would be timed in another's turn).
        """
        self.losses.append(float(loss))
        if self.on_epoch is not None:
            self.on_epoch(epoch + 1, float(loss))
        self.check_cancel()
        if can_pass and epoch + 1 < self.epochs and self.turn_due():
            self.pass_turn()

    def count_steps(self, n: int) -> None:
        self.steps += n

    def numpy_batches(self, rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """One epoch of shuffled, equal-sized NumPy batches (remainder dropped); checks Stop per batch."""
        x, y = self.split.x_train, self.split.y_train
        order = rng.permutation(len(y))[: self.steps_per_epoch * self.batch_size]
        # One gather per epoch, then cheap views: per-step fancy indexing would cost more than a jitted step.
        xs = x[order].reshape(self.steps_per_epoch, self.batch_size, -1)
        ys = y[order].reshape(self.steps_per_epoch, self.batch_size)
        for xb, yb in zip(xs, ys):
            self.check_cancel()
            # Counted when handed out, so that a mark set right after the step includes it.
            self.steps += 1
            yield xb, yb

    def loader_batches(self, loader) -> Iterator:
        """Batches from a PyTorch DataLoader, counting steps and checking Stop per batch."""
        for batch in loader:
            self.check_cancel()
            self.steps += 1
            yield batch

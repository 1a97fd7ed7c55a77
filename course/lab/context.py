"""What every training variant gets: the data, the settings, a clock, a Stop button.

The clock has four marks, set by the variant at the moments only it knows:

    start ── init ──> ready ── first step (trace + compile) ──> compiled ── steady state ──> done

`compile_s` is ready→compiled (for eager code: the first, warm-up step), the
steady state is compiled→done divided by the steps taken in it, and `total_s`
is start→done. JAX dispatches asynchronously, so `mark_compiled` and
`mark_done` take a `block` callable that waits for the device before the clock
is read: without it we would time the dispatch, not the work.
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
        self.timing.start = time.perf_counter()

    def mark_ready(self) -> None:
        self.timing.ready = time.perf_counter()

    def mark_compiled(self, block: Callable[[], object] | None = None) -> None:
        if block is not None:
            block()
        self.timing.compiled = time.perf_counter()
        self.timing.steps_at_compile = self.steps

    def mark_done(self, block: Callable[[], object] | None = None) -> None:
        if block is not None:
            block()
        self.timing.done = time.perf_counter()

    def end_epoch(self, epoch: int, loss: float) -> None:
        """Record epoch `epoch` (0-based) with its mean batch loss; Stop takes effect here too."""
        self.losses.append(float(loss))
        if self.on_epoch is not None:
            self.on_epoch(epoch + 1, float(loss))
        self.check_cancel()

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

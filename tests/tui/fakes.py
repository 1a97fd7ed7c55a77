"""Stand-ins for the parts of the core whose output depends on the machine or the clock.

Screenshots must be identical on every machine: these return fixed hardware,
fixed timings and fixed check results, built with the same shapes the core uses.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from course.lab.api import VARIANTS, Hardware, LabConfig, LabReport, Progress, VariantResult
from course.tui.services import Services


@dataclass
class FakeOutcome:
    name: str
    outcome: str
    cause: str | None = None
    message: str = ""
    duration: float = 0.0
    file: str | None = None
    line: int | None = None


@dataclass
class FakeResult:
    exercise: str
    passed: bool
    cause: str | None
    message: str
    checks: list[FakeOutcome]
    duration: float = 0.0
    seed: int | None = 1234
    file: str | None = None
    line: int | None = None


FAKE_HARDWARE = Hardware("cpu", ["cpu:0 cpu"], "cpu", "JAX on CPU (1 device: cpu); PyTorch on cpu; 2 CPU cores", 2)
FAKE_MS = {"torch_eager": 21.4, "nnx_eager": 860.0, "nnx_jit": 27.6, "nnx_tree": 6.0, "nnx_split_merge": 4.8,
           "linen_jit": 2.0, "jax_scan": 0.38}


class FakeLabServices(Services):
    """Real catalog/progress/checks; lab hardware and timings fixed (or slowed, for Stop)."""

    def __init__(self, *, epoch_delay: float = 0.0, check_result: FakeResult | None = None) -> None:
        super().__init__()
        self.epoch_delay = epoch_delay
        self.check_result = check_result
        self.stopped_at: int | None = None
        self.hold_verdict: threading.Event | None = None  # set by a test to let the verdict come
        self.landed = threading.Event()  # every test of the fake check has landed

    def detect_hardware(self) -> Hardware:
        return FAKE_HARDWARE

    def run_lab(self, variants, epochs, on_progress, cancel, epochs_per_variant=None) -> LabReport:
        config = LabConfig(list(variants), epochs=epochs, epochs_per_variant=dict(epochs_per_variant or {}))
        report = LabReport(FAKE_HARDWARE, config, [], {"jax": "fixed"})
        for v in variants:
            n = config.epochs_for(v)
            losses: list[float] = []
            status, error = "ok", None
            if cancel.is_set():
                status, error = "cancelled", "not started: the run was stopped"
            for epoch in range(1, n + 1):
                if status != "ok":
                    break
                if cancel.is_set():
                    status, error = "cancelled", f"stopped after {len(losses)} of {n} epochs"
                    self.stopped_at = epoch
                    break
                loss = 0.7 / (1 + 0.05 * epoch)
                losses.append(loss)
                on_progress(Progress(v, epoch, n, loss, 0.0, float(n - epoch)))
                if self.epoch_delay:
                    time.sleep(self.epoch_delay)
            ms = FAKE_MS[v]
            ok = status == "ok"
            report.results.append(VariantResult(
                variant=v, label=VARIANTS[v], epochs=n, compile_s=0.8 if ok and not v.endswith("_eager") else None,
                total_s=ms * n / 1000 if ok else None, ms_per_epoch=ms if ok else None,
                steps_per_s=1000 / ms * 32 if ok else None, final_loss=losses[-1] if losses else None,
                test_accuracy=0.802 if ok else None, losses=losses, status=status, error=error,
                full_run_s=ms * epochs / 1000 if ok else None, extrapolated=ok and n < epochs,
                rounds_ms=[ms * f for f in (0.97, 1.0, 1.03, 0.99, 1.01)] if ok else [],
            ))
            report.cancelled = report.cancelled or status == "cancelled"
        return report

    def run_check(self, exercise, on_outcome=None):
        if self.check_result is not None:
            # Each test lands as the real session tells it, then the verdict; a test may hold the
            # check between the two (`hold_verdict`) to see the screen while the rest still runs.
            for check in self.check_result.checks:
                if on_outcome is not None:
                    on_outcome(check)
            if self.hold_verdict is not None:
                self.landed.set()
                self.hold_verdict.wait(timeout=60)
            return self.check_result
        return super().run_check(exercise, on_outcome)

    def warm_up_checks(self, exercise=None) -> None:
        if self.check_result is None:
            super().warm_up_checks(exercise)

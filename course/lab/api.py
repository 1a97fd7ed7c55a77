"""The training lab's one entry point for every front end (CLI, course app, benchmark).

    report = run_lab(LabConfig(variants=["torch_eager", "nnx_jit"], epochs=50),
                     on_progress=print, cancel=threading.Event())

`run_lab` runs the chosen variants in turns (`course.lab.rounds`: each its own
thread, one at a time, round after round, so that load on the machine hits all of
them alike), reports progress after epochs, checks `cancel` before every batch and
returns a `LabReport` whatever happens: a variant that raises is recorded as failed
and the others run on; after Stop the variants in progress and those not started
are recorded as cancelled. A variant's ms/epoch is the median of its timed rounds,
shown with their spread; `LabReport.unreliable` says when the machine was too busy
for the ranking to hold.

The JSON form of a report (`LabReport.to_dict`) is described in
`course/lab/README.md`.
"""

from __future__ import annotations

import os
import platform
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata

import numpy as np

from course.i18n import N_, _, ngettext
from course.lab.context import Cancelled, TrainContext
from course.lab.rounds import RoundRobin
from course.lab.numbers import SPEEDUP_BASIS, median, speedup, unreliable_reasons
from course.lab.variants import REGISTRY, load
from course.titanic import FEATURES

# 2: one speed-up basis (steady state), `first_step_s`, `compile_s` null for eager variants.
# 3: interleaved rounds: `rounds_ms` per result (ms_per_epoch is their median), `measurement`.
SCHEMA_VERSION = 3
READABLE_SCHEMAS = (1, 2, 3)

VARIANTS: dict[str, str] = {name: info.label for name, info in REGISTRY.items()}
INPUT_PATHS: dict[str, str] = {name: info.input_path for name, info in REGISTRY.items()}
# Why a variant did not finish, in English in the JSON report; `stop_text` says it where it is shown.
NOT_STARTED = N_("not started: the run was stopped")
STOPPED_AFTER = N_("stopped after {done} of {epochs} epochs")
COMPILED: dict[str, bool] = {name: info.compiled for name, info in REGISTRY.items()}
BASELINES = ("nnx_eager", "torch_eager")

# Measured on a 2-core CPU: the lab warns before a long eager run.
NNX_EAGER_S_PER_EPOCH_CPU = 0.86
# NNX eager runs this many epochs and its full run is extrapolated, unless the full
# run costs at most FULL_EAGER_S: then it runs in full (50 epochs take ~43 s, 500 ~7 min).
EAGER_SAMPLE_EPOCHS = 20
FULL_EAGER_S = 45.0


def default_eager_epochs(epochs: int) -> int:
    """Epochs NNX eager runs by default for a run of `epochs`: all of them when that takes
    seconds, not minutes (on the reference CPU), else EAGER_SAMPLE_EPOCHS and the rest extrapolated."""
    if epochs * NNX_EAGER_S_PER_EPOCH_CPU <= FULL_EAGER_S:
        return epochs
    return min(EAGER_SAMPLE_EPOCHS, epochs)

PROGRESS_INTERVAL_S = 0.1


class LabConfigError(ValueError):
    """A setting the lab cannot run with; the message says which and why."""


@dataclass
class LabConfig:
    variants: list[str]
    epochs: int = 500
    batch_size: int = 32
    learning_rate: float = 1e-3
    hidden: int = 64
    seed: int = 0
    data_path: str | None = None
    # Fewer epochs for a slow variant, e.g. {"nnx_eager": 20}; its whole-run
    # time for `epochs` is then extrapolated and marked so.
    epochs_per_variant: dict[str, int] = field(default_factory=dict)

    def epochs_for(self, variant: str) -> int:
        return self.epochs_per_variant.get(variant, self.epochs)

    def validate(self) -> None:
        unknown = [v for v in self.variants if v not in VARIANTS]
        if unknown:
            raise LabConfigError(_("unknown variant(s) {unknown}; choose from {known}").format(
                unknown=", ".join(unknown), known=", ".join(VARIANTS)))
        if not self.variants:
            raise LabConfigError(_("no variant chosen"))
        if len(set(self.variants)) != len(self.variants):
            raise LabConfigError(_("a variant is listed twice"))
        for name, value in [("epochs", self.epochs), ("batch_size", self.batch_size), ("hidden", self.hidden)]:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise LabConfigError(_("{name} must be a whole number of at least 1, got {value!r}").format(
                    name=name, value=value))
        if not (isinstance(self.learning_rate, (int, float)) and 0 < self.learning_rate < 10):
            raise LabConfigError(_("learning_rate must be a positive number, got {value!r}").format(
                value=self.learning_rate))
        for variant, n in self.epochs_per_variant.items():
            if variant not in VARIANTS:
                raise LabConfigError(_("epochs given for unknown variant {variant!r}").format(variant=variant))
            if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= self.epochs:
                raise LabConfigError(_("epochs for {variant} must be between 1 and {epochs}, got {n!r}").format(
                    variant=variant, epochs=self.epochs, n=n))


@dataclass
class Hardware:
    jax_platform: str
    jax_devices: list[str]
    torch_device: str
    summary: str  # in English, for the JSON report; `describe()` says it in the language in use
    cpu_count: int = 0
    # What `summary` names: the first JAX device's kind, PyTorch's device with its name (absent from older reports).
    device_kind: str = ""
    torch_name: str = ""

    def describe(self) -> str:
        """`summary`, in the language in use: what JAX and PyTorch run on, and how many CPU cores."""
        kind = self.device_kind or next((d.split(" ", 1)[1] for d in self.jax_devices if " " in d), self.jax_platform)
        n = len(self.jax_devices)
        return _("JAX on {platform} ({devices}: {kind}); PyTorch on {torch}; {cores}").format(
            platform=self.jax_platform.upper(), devices=ngettext("{n} device", "{n} devices", n).format(n=n),
            kind=kind, torch=self.torch_name or self.torch_device,
            cores=ngettext("{n} CPU core", "{n} CPU cores", self.cpu_count).format(n=self.cpu_count))


def detect_hardware() -> Hardware:
    """What JAX and PyTorch will run on here (imports both, once)."""
    import jax
    import torch

    devices = jax.devices()
    platform_name = jax.default_backend()
    names = [f"{d.platform}:{d.id} {getattr(d, 'device_kind', '')}".strip() for d in devices]
    if torch.cuda.is_available():
        torch_device = "cuda"
        torch_name = f"cuda ({torch.cuda.get_device_name(0)})"
    elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        torch_device = torch_name = "mps"
    else:
        torch_device = torch_name = "cpu"
    cpus = os.cpu_count() or 0
    kind = devices[0].device_kind if devices else "?"
    summary = (
        f"JAX on {platform_name.upper()} ({len(devices)} device{'s' if len(devices) != 1 else ''}: {kind}); "
        f"PyTorch on {torch_name}; {cpus} CPU core{'s' if cpus != 1 else ''}"
    )
    return Hardware(platform_name, names, torch_device, summary, cpus, device_kind=kind, torch_name=torch_name)


@dataclass
class Progress:
    variant: str
    epoch: int
    epochs: int
    loss: float
    elapsed_s: float
    eta_s: float | None


@dataclass
class VariantResult:
    variant: str
    label: str
    epochs: int
    # Trace + compile of the first step; None for an eager variant, which compiles nothing.
    compile_s: float | None
    total_s: float | None
    ms_per_epoch: float | None
    steps_per_s: float | None
    final_loss: float | None
    test_accuracy: float | None
    losses: list[float]
    status: str  # "ok" | "failed" | "cancelled"
    error: str | None = None
    input_path: str = ""
    init_s: float | None = None
    steps: int = 0
    # Wall time for the configured epoch count: measured when `epochs` is that
    # count, otherwise init + compile + ms_per_epoch x epochs, and `extrapolated`.
    full_run_s: float | None = None
    extrapolated: bool = False
    traceback: str | None = None
    # The first step, whatever it cost: compile_s under jit, a warm-up step when eager.
    first_step_s: float | None = None
    # Steady-state ms per epoch of each timed round, in order; ms_per_epoch is their median.
    rounds_ms: list[float] = field(default_factory=list)


def error_text(result: VariantResult) -> str:
    """`result.error` in the language in use: why it was stopped, or the exception as it was raised."""
    error = result.error or ""
    if error == NOT_STARTED:
        return _(NOT_STARTED)
    done = len(result.losses)
    if error == STOPPED_AFTER.format(done=done, epochs=result.epochs):
        return _(STOPPED_AFTER).format(done=done, epochs=result.epochs)
    return error


@dataclass
class LabReport:
    hardware: Hardware
    config: LabConfig
    results: list[VariantResult]
    versions: dict[str, str]
    cancelled: bool = False
    dropped_per_epoch: int = 0
    steps_per_epoch: int = 0
    n_train: int = 0
    n_test: int = 0
    # The 1-minute load average as the run started and as it ended (None where the system has none).
    load_start: float | None = None
    load_end: float | None = None

    @property
    def failed(self) -> bool:
        return any(r.status == "failed" for r in self.results)

    def result(self, variant: str) -> VariantResult | None:
        return next((r for r in self.results if r.variant == variant), None)

    def speedup(self, variant: str, baseline: str) -> float | None:
        """How many times faster `variant` trains an epoch than `baseline` (see `course.lab.numbers`)."""
        r, base = self.result(variant), self.result(baseline)
        if r is None or base is None or r.status != "ok" or base.status != "ok":
            return None
        return speedup(base.ms_per_epoch, r.ms_per_epoch)

    def speedups(self) -> dict:
        """Every variant against each baseline, on the one basis the lab uses everywhere."""
        out: dict = {"basis": SPEEDUP_BASIS}
        for base in BASELINES:
            out[f"vs_{base}"] = {r.variant: self.speedup(r.variant, base) for r in self.results}
        return out

    def unreliable(self) -> list[dict]:
        """Why the ranking may not hold (a busy machine, rounds far apart, too few rounds); empty when it holds."""
        return unreliable_reasons(
            [self.load_start, self.load_end], self.hardware.cpu_count,
            {r.variant: r.rounds_ms for r in self.results if r.status == "ok"})

    def measurement(self) -> dict:
        return {
            "method": "interleaved rounds: the variants take turns; ms_per_epoch is the median of each variant's "
                      "rounds",
            "load_average": [self.load_start, self.load_end],
            "cpu_count": self.hardware.cpu_count,
            "unreliable": self.unreliable(),
        }

    def to_dict(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "measurement": self.measurement(),
            "cancelled": self.cancelled,
            "hardware": asdict(self.hardware),
            "config": asdict(self.config),
            "data": {
                "n_train": self.n_train,
                "n_test": self.n_test,
                "steps_per_epoch": self.steps_per_epoch,
                "dropped_per_epoch": self.dropped_per_epoch,
                "ragged_batch": "dropped: every variant trains on equal batches, reshuffled each epoch",
            },
            "versions": dict(self.versions),
            "results": [asdict(r) for r in self.results],
            "speedups": self.speedups(),
        }


    @classmethod
    def from_dict(cls, data: dict) -> "LabReport":
        """The report `to_dict` wrote (schema_version 1 or 2), e.g. from a child process."""
        if data.get("schema_version") not in READABLE_SCHEMAS:
            raise ValueError(f"lab report schema_version {data.get('schema_version')!r}, "
                             f"expected one of {READABLE_SCHEMAS}")
        counts = data.get("data", {})
        load = (list(data.get("measurement", {}).get("load_average") or []) + [None, None])[:2]
        return cls(
            hardware=Hardware(**data["hardware"]),
            config=LabConfig(**data["config"]),
            results=[VariantResult(**r) for r in data["results"]],
            versions=dict(data["versions"]),
            cancelled=bool(data["cancelled"]),
            **{k: int(counts.get(k, 0)) for k in ("dropped_per_epoch", "steps_per_epoch", "n_train", "n_test")},
            load_start=_float_or_none(load[0]), load_end=_float_or_none(load[1]),
        )


def _float_or_none(value) -> float | None:
    return None if value is None else float(value)


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):  # not on every system (Windows)
        return None


def versions() -> dict[str, str]:
    from course import __version__

    out = {"jaxlings": __version__, "python": platform.python_version(), "platform": platform.platform()}
    for dist in ("jax", "jaxlib", "flax", "optax", "torch", "numpy", "pandas"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def run_lab(
    config: LabConfig,
    *,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    hardware: Hardware | None = None,
    on_start: Callable[[str, int], None] | None = None,
) -> LabReport:
    """Train the configured variants one after another; see the module docstring.

    Raises `LabConfigError` for bad settings and `course.titanic.TitanicDataError`
    for an unusable data file, before anything runs. `on_progress` runs on this
    thread: keep it quick (post a message, update a bar); it is called at most
    every 0.1 s per variant, and always for a variant's last epoch.
    `on_start(variant, epochs)` runs as each variant begins, after every
    message about the settings has been decided.
    """
    from course.titanic import load_titanic

    config.validate()
    split = load_titanic(config.data_path, seed=config.seed)
    if split.n_train < config.batch_size:
        raise LabConfigError(_("batch_size {batch} is larger than the {n} training passengers").format(
            batch=config.batch_size, n=split.n_train))
    hardware = hardware or detect_hardware()
    _warm_up(config)
    report = LabReport(
        hardware=hardware, config=config, results=[], versions=versions(),
        n_train=split.n_train, n_test=split.n_test,
        steps_per_epoch=split.n_train // config.batch_size,
        dropped_per_epoch=split.n_train % config.batch_size,
    )
    report.load_start = load_average()
    results: dict[str, VariantResult] = {}
    contexts: dict[str, TrainContext] = {}
    turns = RoundRobin(config.variants, cancel)

    def run_one(name: str) -> None:
        if on_start is not None:
            on_start(name, config.epochs_for(name))
        results[name] = _run_variant(name, config, split, hardware, on_progress, cancel, turns, contexts)

    turns.run(run_one)
    report.load_end = load_average()
    for name in config.variants:
        report.results.append(results.get(name) or _not_run(name, config))
    report.cancelled = any(r.status == "cancelled" for r in report.results)
    return report


def _eta(contexts: dict[str, "TrainContext"], variants: list[str]) -> float | None:
    """Seconds until the whole run ends: every variant's remaining epochs at its own steady rate."""
    total = 0.0
    for name in variants:
        ctx = contexts.get(name)
        if ctx is None or ctx.timing.compiled is None:
            return None
        done = len(ctx.losses) - ctx.timing.steps_at_compile / ctx.steps_per_epoch
        if done <= 0:
            return None
        total += (ctx.clock() - ctx.timing.compiled) / done * (ctx.epochs - len(ctx.losses))
    return total


def _warm_up(config: LabConfig) -> None:
    """Pay the process's one-time start-up costs before any clock starts.

    The first JAX code in a process starts the backend and compiles the
    random-number ops NNX uses to initialise layers; without this the first
    JAX variant in the list would be charged for it and the order would change
    the numbers.
    """
    from flax import nnx

    from course.lab.variants.nnx_mlp import MLP

    MLP(len(FEATURES), config.hidden, rngs=nnx.Rngs(params=config.seed))


def _not_run(name: str, config: LabConfig) -> VariantResult:
    return VariantResult(
        variant=name, label=VARIANTS[name], epochs=0, compile_s=None, total_s=None, ms_per_epoch=None,
        steps_per_s=None, final_loss=None, test_accuracy=None, losses=[], status="cancelled",
        error=NOT_STARTED, input_path=INPUT_PATHS[name],
    )


def _run_variant(name, config, split, hardware, on_progress, cancel, turns=None, contexts=None) -> VariantResult:
    epochs = config.epochs_for(name)
    last_sent = [0.0]
    contexts = {} if contexts is None else contexts

    def on_epoch(epoch: int, loss: float) -> None:
        if on_progress is None:
            return
        now = time.perf_counter()
        if epoch < epochs and now - last_sent[0] < PROGRESS_INTERVAL_S:
            return
        last_sent[0] = now
        elapsed = ctx.clock() - ctx.timing.start
        on_progress(Progress(name, epoch, epochs, loss, elapsed, _eta(contexts, config.variants)))

    ctx = TrainContext(
        split=split, epochs=epochs, batch_size=config.batch_size, learning_rate=config.learning_rate,
        hidden=config.hidden, seed=config.seed, torch_device=hardware.torch_device,
        cancel=cancel, on_epoch=on_epoch, baton=turns,
    )
    contexts[name] = ctx
    result = VariantResult(
        variant=name, label=VARIANTS[name], epochs=epochs, compile_s=None, total_s=None, ms_per_epoch=None,
        steps_per_s=None, final_loss=None, test_accuracy=None, losses=ctx.losses, status="ok",
        input_path=INPUT_PATHS[name],
    )
    try:
        logits = load(name)(ctx)
    except Cancelled:
        result.status, result.error = "cancelled", STOPPED_AFTER.format(done=len(ctx.losses), epochs=epochs)
    except Exception as exc:  # a failing variant must not take the others down
        result.status = "failed"
        result.error = f"{type(exc).__name__}: {exc}".strip()
        result.traceback = traceback.format_exc()
    else:
        logits = np.asarray(logits).reshape(-1)
        result.test_accuracy = float(np.mean((logits > 0) == (split.y_test > 0.5)))
    _fill_timing(result, ctx, config.epochs)
    return result


def _fill_timing(result: VariantResult, ctx: TrainContext, full_epochs: int) -> None:
    t = ctx.timing
    result.steps = ctx.steps
    result.final_loss = ctx.losses[-1] if ctx.losses else None
    if t.ready is not None:
        result.init_s = t.ready - t.start
    if t.ready is not None and t.compiled is not None:
        result.first_step_s = t.compiled - t.ready
        result.compile_s = result.first_step_s if COMPILED[result.variant] else None
    if result.status != "ok" or t.done is None or t.compiled is None:
        return
    result.total_s = t.done - t.start
    result.rounds_ms = [1000 * s / n * ctx.steps_per_epoch for s, n in ctx.rounds]
    if result.rounds_ms:
        # The median round: a burst of load in one or two rounds does not move it.
        result.ms_per_epoch = median(result.rounds_ms)
        result.steps_per_s = 1000 * ctx.steps_per_epoch / result.ms_per_epoch
    elif result.epochs:
        result.ms_per_epoch = 1000 * result.total_s / result.epochs
    if result.epochs == full_epochs:
        result.full_run_s = result.total_s
    elif result.ms_per_epoch is not None:
        # Whatever the first step cost is paid once; every further epoch at the steady rate.
        first_step_epochs = t.steps_at_compile / ctx.steps_per_epoch
        result.full_run_s = (result.init_s or 0) + (result.first_step_s or 0) + (
            result.ms_per_epoch / 1000 * (full_epochs - first_step_epochs))
        result.extrapolated = True

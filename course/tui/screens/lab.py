"""The training lab: the article's Titanic model in PyTorch and JAX, timed side by side."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, DataTable, Footer, Header, Input, Label, ProgressBar, SelectionList, Static

from course.tui.screens.base import CourseScreen
from course.tui.widgets.loss_plot import LossPlot

# The article's headline: the same NNX model with and without @nnx.jit.
EAGER, JITTED = "nnx_eager", "nnx_jit"
# Eager NNX runs ~1 s per epoch on a laptop CPU: by default only a few epochs
# are run and the rest extrapolated, so a first run takes a minute, not seven.
EAGER_EPOCHS = 20
COLUMNS = [("Variant", 32), ("Epochs", 6), ("Compile", 8), ("ms/epoch", 8), ("Full run", 9),
           ("× eager NNX", 11), ("× PyTorch", 9), ("Test acc", 8), ("Status", 11)]


def fmt_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def headline(report: Any) -> str:
    """The article's comparison (the same NNX model with and without @nnx.jit), in one sentence."""
    eager, jitted = report.result(EAGER), report.result(JITTED)
    if report.cancelled:
        return "■ Stopped. What finished before Stop is in the table; Run starts again."
    if eager is None or jitted is None or eager.status != "ok" or jitted.status != "ok":
        return "Run both NNX eager and NNX @nnx.jit to see what jit buys you."
    if not eager.full_run_s or not jitted.full_run_s:
        return "The NNX runs finished without timings."
    ratio = eager.full_run_s / jitted.full_run_s
    approx = "≈" if eager.extrapolated or jitted.extrapolated else ""
    return (
        f"[b]@nnx.jit vs eager NNX[/b]: {approx}{fmt_seconds(jitted.full_run_s)} vs "
        f"{approx}{fmt_seconds(eager.full_run_s)} for {report.config.epochs} epochs: "
        f"[b]{ratio:.1f}× faster[/b] (compiling once took {fmt_seconds(jitted.compile_s)})."
    )


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}×"


class VariantRow(Vertical):
    """One variant's live progress: attributes down from the screen."""

    def __init__(self, variant: str, label: str, epochs: int) -> None:
        super().__init__(classes="variant-row", id=f"row-{variant}")
        self.label = label
        self.epochs = epochs

    def compose(self) -> ComposeResult:
        yield Label(self.label, classes="variant-label")
        with Horizontal(classes="variant-bar"):
            yield ProgressBar(total=self.epochs, show_eta=False, show_percentage=True)
            yield Static("waiting", classes="variant-state")

    def show(self, epoch: int, epochs: int, loss: float, eta_s: float | None) -> None:
        self.query_one(ProgressBar).update(total=epochs, progress=epoch)
        eta = f" · ~{fmt_seconds(eta_s)} left" if eta_s is not None else ""
        self.query_one(".variant-state", Static).update(f"epoch {epoch}/{epochs} · loss {loss:.4f}{eta}")

    def finish(self, text: str, epochs_run: int, epochs: int) -> None:
        # Progress messages can arrive before the row is mounted; the report is the truth.
        self.query_one(ProgressBar).update(total=max(epochs, 1), progress=epochs_run)
        self.query_one(".variant-state", Static).update(text)


class LabScreen(CourseScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Map", id="lab.back", tooltip="Back to the map (a run keeps going)"),
        Binding("r", "run", "Run", id="lab.run", tooltip="Train the chosen variants"),
        Binding("x", "stop", "Stop", id="lab.stop", tooltip="Stop the run within a second"),
        Binding("ctrl+s", "save", "Save JSON", id="lab.save", tooltip="Save the last results as JSON"),
    ]

    running: reactive[bool] = reactive(False, bindings=True)

    @dataclass
    class Ready(Message):
        hardware: str
        variants: dict[str, str]

    @dataclass
    class Progressed(Message):
        variant: str
        epoch: int
        epochs: int
        loss: float
        eta_s: float | None

        def can_replace(self, message: Message) -> bool:
            # Only the newest epoch of a variant matters on screen.
            return isinstance(message, LabScreen.Progressed) and message.variant == self.variant

    @dataclass
    class Finished(Message):
        report: Any

    @dataclass
    class Saved(Message):
        path: str

    def __init__(self) -> None:
        super().__init__()
        self.variants: dict[str, str] = {}
        self.report: Any = None
        self._cancel = threading.Event()
        self._losses: dict[str, list[float]] = {}
        self._plot_dirty = False

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="lab-main"):
            with Vertical(id="lab-setup"):
                yield Static("Detecting hardware…", id="lab-hardware")
                yield SelectionList[str](id="lab-variants")
                with Horizontal(id="lab-epochs-row"):
                    yield Label("Epochs")
                    yield Input("500", type="integer", id="lab-epochs")
                with Horizontal(id="lab-eager-row"):
                    yield Label("Eager NNX")
                    yield Input(
                        str(EAGER_EPOCHS), type="integer", id="lab-eager-epochs",
                        tooltip="Epochs actually run for NNX eager (about a second each on a CPU); "
                        "its full-run time is extrapolated and marked ≈. Same as Epochs for a full run.",
                    )
                with Horizontal(id="lab-buttons"):
                    yield Button("Run", id="lab-run", variant="success")
                    yield Button("Stop", id="lab-stop", variant="error", disabled=True)
            with VerticalScroll(id="lab-out"):
                yield Static(
                    "Choose variants and epochs, then Run. Each variant trains the article's "
                    "Titanic MLP (9→64→1, Adam 1e-3, batch 32).",
                    id="lab-headline",
                )
                yield Vertical(id="lab-rows")
                yield LossPlot(id="lab-plot")
                yield DataTable(id="lab-table", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = "Training lab"
        table = self.query_one(DataTable)
        # Fixed widths: auto-sized columns settle a frame late and jump as rows arrive.
        for label, width in COLUMNS:
            table.add_column(label, width=width)
        self.query_one("#lab-variants").loading = True
        self.set_interval(0.5, self._replot)
        self._detect()

    @work(thread=True, exclusive=True, group="lab-detect", exit_on_error=False, description="detecting hardware")
    def _detect(self) -> None:
        services = self.app.services
        variants = services.lab_variants()
        hardware = services.detect_hardware()
        self.post_message(self.Ready(hardware.summary, variants))

    def on_lab_screen_ready(self, event: Ready) -> None:
        self.variants = event.variants
        self.query_one("#lab-hardware", Static).update(f"[b]Hardware[/b]\n{event.hardware}")
        selection = self.query_one("#lab-variants", SelectionList)
        selection.loading = False
        selection.add_options([(label, name, True) for name, label in event.variants.items()])
        self.refresh_bindings()

    # -- run ------------------------------------------------------------------------
    def _read_int(self, input_id: str, what: str, high: int) -> int | None:
        raw = self.query_one(input_id, Input).value.strip()
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if not 1 <= value <= high:
            self.notify(f"{what} must be a whole number from 1 to {high}.", severity="warning")
            return None
        return value

    async def action_run(self) -> None:
        if self.running or not self.variants:
            return
        chosen = list(self.query_one("#lab-variants", SelectionList).selected)
        if not chosen:
            self.notify("Tick at least one variant.", severity="warning")
            return
        epochs = self._read_int("#lab-epochs", "Epochs", 100_000)
        if epochs is None:
            return
        per_variant: dict[str, int] = {}
        if EAGER in chosen:
            eager = self._read_int("#lab-eager-epochs", "Eager NNX epochs", epochs)
            if eager is None:
                return
            if eager < epochs:
                per_variant[EAGER] = eager
        rows = self.query_one("#lab-rows")
        # The last run's rows have the same ids: they must be gone before the new ones mount.
        self.running = True
        await rows.remove_children()
        await rows.mount_all([VariantRow(v, self.variants.get(v, v), per_variant.get(v, epochs)) for v in chosen])
        self._losses = {v: [] for v in chosen}
        self._plot_dirty = True
        self._cancel = threading.Event()
        self.query_one("#lab-headline", Static).update(f"Training {len(chosen)} variant(s) for {epochs} epochs…")
        self._train(chosen, epochs, per_variant, self._cancel)

    @work(thread=True, exclusive=True, group="lab", exit_on_error=False, description="training")
    def _train(self, variants: list[str], epochs: int, per_variant: dict[str, int], cancel: threading.Event) -> None:
        losses = self._losses

        def on_progress(p: Any) -> None:
            # Appending in this thread keeps every point for the plot, while the
            # on-screen messages may be coalesced.
            losses.setdefault(p.variant, []).append(float(p.loss))
            self._plot_dirty = True
            self.post_message(
                self.Progressed(p.variant, int(p.epoch), int(p.epochs), float(p.loss),
                                None if p.eta_s is None else float(p.eta_s))
            )

        report = None
        try:
            report = self.app.services.run_lab(variants, epochs, on_progress, cancel, per_variant)
        finally:
            self.post_message(self.Finished(report))

    def on_lab_screen_progressed(self, event: Progressed) -> None:
        rows = self.query(f"#row-{event.variant}")
        if rows:
            rows.first(VariantRow).show(event.epoch, event.epochs, event.loss, event.eta_s)

    def on_lab_screen_finished(self, event: Finished) -> None:
        self.running = False
        report = event.report
        if report is None:
            self.query_one("#lab-headline", Static).update("✗ The run failed; see the message.")
            return
        self.report = report
        self.app.lab_reports.append(report)
        self._show_report(report)

    def _show_report(self, report: Any) -> None:
        speedups = report.speedups()["steady_state"]
        vs_eager, vs_torch = speedups["vs_nnx_eager"], speedups["vs_torch_eager"]
        table = self.query_one(DataTable)
        table.clear()
        curves: dict[str, list[float]] = {}
        for r in report.results:
            approx = "≈" if r.extrapolated else ""
            table.add_row(
                r.label,
                str(r.epochs),
                fmt_seconds(r.compile_s),
                "–" if r.ms_per_epoch is None else f"{r.ms_per_epoch:.2f}",
                "–" if r.full_run_s is None else approx + fmt_seconds(r.full_run_s),
                _ratio(vs_eager.get(r.variant)),
                _ratio(vs_torch.get(r.variant)),
                "–" if r.test_accuracy is None else f"{r.test_accuracy:.3f}",
                ("✓ " if r.status == "ok" else "✗ ") + r.status,
            )
            rows = self.query(f"#row-{r.variant}")
            if rows:
                done = "✓ done" if r.status == "ok" else f"✗ {r.status}"
                if r.error:
                    done += f": {r.error}"
                rows.first(VariantRow).finish(done, len(r.losses), r.epochs)
            if r.losses:
                curves[r.label] = list(r.losses)
        self.query_one(LossPlot).set_curves(curves)
        self._plot_dirty = False
        self.query_one("#lab-headline", Static).update(headline(report))

    def _replot(self) -> None:
        if not self._plot_dirty or not self.running:
            return
        self._plot_dirty = False
        self.query_one(LossPlot).set_curves(
            {self.variants.get(v, v): list(l) for v, l in self._losses.items()}
        )

    def action_stop(self) -> None:
        if self.running:
            self._cancel.set()
            self.query_one("#lab-headline", Static).update("Stopping…")

    # -- save ---------------------------------------------------------------------------
    def action_save(self) -> None:
        if self.report is None:
            self.notify("Nothing to save yet: run the lab first.")
            return
        self._save(self.report)

    @work(thread=True, exclusive=True, group="lab-save", exit_on_error=False, description="saving results")
    def _save(self, report: Any) -> None:
        import time

        from course.paths import workspace

        path = workspace() / f"lab-results-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps(report.to_dict(), indent=2), encoding="utf-8")
        self.post_message(self.Saved(str(path)))

    def on_lab_screen_saved(self, event: Saved) -> None:
        self.notify(f"Saved to {event.path}", title="Results saved")

    # -- buttons and key state --------------------------------------------------------
    @on(Button.Pressed, "#lab-run")
    async def _run_pressed(self) -> None:
        await self.action_run()

    @on(Button.Pressed, "#lab-stop")
    def _stop_pressed(self) -> None:
        self.action_stop()

    @on(Input.Submitted, "#lab-epochs")
    async def _epochs_submitted(self) -> None:
        await self.action_run()

    def watch_running(self, running: bool) -> None:
        if self.is_mounted:
            self.query_one("#lab-run", Button).disabled = running
            self.query_one("#lab-stop", Button).disabled = not running

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return bool(self.variants) and not self.running
        if action == "stop":
            return self.running
        if action == "save":
            return None if self.report is None else True
        return True

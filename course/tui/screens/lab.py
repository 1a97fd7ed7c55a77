"""The training lab: the article's Titanic model in PyTorch and JAX, timed side by side."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.markup import escape
from rich.text import Text

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Button, DataTable, Header, Input, Label, ProgressBar, SelectionList, Static
from textual.widgets.data_table import ColumnKey

from course.lab.api import FULL_EAGER_S, default_eager_epochs, error_text
from course.lab.numbers import (EXTRAPOLATED, MIN_ROUNDS, MISSING, fmt_ms, fmt_seconds, fmt_speedup, fmt_spread,
                                legend_lines, plot_legend, unreliable_lines)
from course.lab.variants import ladder_lines
from course.i18n import N_, _
from course.tui.screens.base import CourseScreen
from course.tui.widgets.footer import CourseFooter
from course.tui.widgets.loss_plot import LossPlot

# The article's headline: the same NNX model with and without @nnx.jit.
EAGER, JITTED = "nnx_eager", "nnx_jit"
# Eager NNX runs ~1 s per epoch on a laptop CPU: by default a long run gives it only a
# few epochs and extrapolates the rest, so a first run takes a minute, not seven; a short
# one runs it in full (`default_eager_epochs`), until the learner types a number there.
EPOCHS = 500
RUNNING = N_("Training {count} variant(s) for {epochs} epochs, taking turns…{left}")
INTRO = N_("Choose variants and epochs, then Run (r or Enter). Each variant trains the article's "
           "Titanic MLP (9→64→1, Adam 1e-3, batch 32).")
MAX_EPOCHS = 100_000
# Fixed widths, not auto-sized columns (they settle a frame late and jump as rows
# arrive): each heading with the cells its figures need. At 80 columns the table
# has 76 (the pane's padding and scroll bar take the rest).
COLUMNS = [(N_("Variant"), 15), (N_("Compile"), 7), (N_("ms/epoch"), 7), (N_("Full run"), 8),
           (N_("×NNX eager"), 7), (N_("×PyTorch"), 7), (N_("Acc"), 5)]
TABLE_MARGIN = 4
CELL_PADDING = 1  # DataTable's default, each side of every cell


def column_widths(labels: list[str], figures: list[int], room: int) -> tuple[list[int], int]:
    """The columns' widths in cells and the header's height in lines.

    Each column is as wide as its figures and its heading (in cells: Japanese is
    double width). Where that is wider than `room`, headings of several words
    wrap onto a second line rather than push the last columns out of sight.
    """
    padding = 2 * CELL_PADDING * len(labels)
    widths = [max(figure, cell_len(label)) for label, figure in zip(labels, figures)]
    if sum(widths) + padding <= room:
        return widths, 1
    return [max(figure, *(cell_len(word) for word in label.split())) for label, figure in zip(labels, figures)], 2


def headline(report: Any) -> str:
    """The article's comparison (the same NNX model with and without @nnx.jit), in one sentence.

    The ratio is `report.speedup`, the figure the table shows for the same pair.
    """
    eager, jitted = report.result(EAGER), report.result(JITTED)
    if report.cancelled:
        return _("■ Stopped. What finished before Stop is in the table; Run starts again.")
    if eager is None or jitted is None or eager.status != "ok" or jitted.status != "ok":
        return _("Run both NNX eager and NNX @nnx.jit to see what jit buys you.")
    ratio = report.speedup(JITTED, EAGER)
    if ratio is None:
        return _("The NNX runs finished without timings.")
    return _(
        "[b]@nnx.jit vs eager NNX: {speedup} faster[/b] per epoch (steady state). "
        "Full run of {epochs} epochs: {jit_run} vs {eager_run}; "
        "compiling once took {compile}."
    ).format(speedup=fmt_speedup(ratio), epochs=report.config.epochs, jit_run=_full_run(jitted),
             eager_run=_full_run(eager), compile=fmt_seconds(jitted.compile_s))


def _full_run(r: Any) -> str:
    if r.full_run_s is None:
        return MISSING
    return fmt_seconds(r.full_run_s) + (EXTRAPOLATED if r.extrapolated else "")


def parse_epochs(raw: str, high: int) -> tuple[int | None, str]:
    """The whole number in a field, or None and why not, in words for the note beside it."""
    try:
        value = int(raw.strip())
    except ValueError:
        return None, _("a whole number from 1 to {high}").format(high=f"{high:,}")
    if not 1 <= value <= high:
        return None, _("from 1 to {high}, not {value}").format(high=f"{high:,}", value=f"{value:,}")
    return value, ""


class VariantRow(Horizontal):
    """One variant's live progress on one line (seven fit at 80×24): attributes down from the screen."""

    def __init__(self, variant: str, label: str, epochs: int) -> None:
        super().__init__(classes="variant-row", id=f"row-{variant}")
        self.variant = variant
        self.label = label  # in English, as the report keeps it
        self.epochs = epochs

    def compose(self) -> ComposeResult:
        # The name, as in the list and the table; the ladder says what each one is.
        yield Label(self.variant, classes="variant-label", markup=False)
        yield ProgressBar(total=self.epochs, show_eta=False, show_percentage=True)
        yield Static(_("waiting"), classes="variant-state")

    def relabel(self) -> None:
        """Names are not translated; the state is said again when the next figures come."""

    def show(self, epoch: int, epochs: int, loss: float) -> None:
        self.query_one(ProgressBar).update(total=epochs, progress=epoch)
        self.query_one(".variant-state", Static).update(
            _("epoch {epoch}/{epochs} · loss {loss}").format(epoch=epoch, epochs=epochs, loss=f"{loss:.4f}"))

    def finish(self, text: str, epochs_run: int, epochs: int) -> None:
        # Progress messages can arrive before the row is mounted; the report is the truth.
        self.query_one(ProgressBar).update(total=max(epochs, 1), progress=epochs_run)
        self.query_one(".variant-state", Static).update(text)


class LabScreen(CourseScreen):
    BINDINGS = [
        Binding("escape", "app.pop_screen", N_("Map"), id="lab.back", tooltip=N_("Back to the map (a run keeps going)")),
        Binding("r", "run", N_("Run"), id="lab.run", tooltip=N_("Train the chosen variants")),
        Binding("x", "stop", N_("Stop"), id="lab.stop", tooltip=N_("Stop the run within a second")),
        # A text field owns `x`: from there Ctrl+X stops (and the footer says so while it has the focus).
        Binding("ctrl+x", "stop_from_field", N_("Stop"), id="lab.stop_field", priority=True,
                tooltip=N_("Stop the run within a second")),
        # Wherever the focus is, the results below the settings are a page away.
        Binding("pagedown", "page_results(1)", N_("Page down"), id="lab.pagedown", priority=True, show=False),
        Binding("pageup", "page_results(-1)", N_("Page up"), id="lab.pageup", priority=True, show=False),
        Binding("ctrl+s", "save", N_("Save JSON"), id="lab.save",
                tooltip=N_("Save the last results as JSON under .jaxlings/lab/")),
    ]
    # On the Run button, not in a field or the list: `r` and Enter start a run at once.
    AUTO_FOCUS = "#lab-run"

    running: reactive[bool] = reactive(False, bindings=True)

    @dataclass
    class Ready(Message):
        variants: dict[str, str]

    @dataclass
    class HardwareFound(Message):
        hardware: Any  # course.lab.api.Hardware: said again in the language in use

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
        error: str = ""

    def __init__(self) -> None:
        super().__init__()
        self.variants: dict[str, str] = {}
        self.report: Any = None
        self._cancel = threading.Event()
        self._losses: dict[str, list[float]] = {}
        self._plot_dirty = False
        # `r` pressed before the variants are known: the run starts when they are.
        self._run_when_ready = False
        self.hardware: Any = None
        # The headline's message and values, kept so it can be said again in another language.
        self._headline_said: tuple[str | None, dict[str, Any]] = (INTRO, {})
        # The eager field follows Epochs (default_eager_epochs) until the learner edits it.
        self._eager_auto: str | None = str(default_eager_epochs(EPOCHS))
        self._run_said: dict[str, Any] = {}
        self._run_started = 0.0
        self._eta: tuple[float, float] | None = None
        self._warning_said: list[dict] = []

    def compose(self) -> ComposeResult:
        yield Header()
        with Vertical(id="lab-main"):
            with Horizontal(id="lab-setup"):
                yield SelectionList[str](id="lab-variants")
                with Vertical(id="lab-settings"):
                    with Horizontal(id="lab-fields"):
                        with Vertical(classes="lab-field"):
                            yield Label(_("Epochs"), id="lab-epochs-label")
                            yield Input(str(EPOCHS), type="integer", id="lab-epochs")
                            yield Static("", id="lab-epochs-note", classes="lab-note")
                        with Vertical(classes="lab-field"):
                            yield Label(_("Eager NNX epochs"), id="lab-eager-label")
                            yield Input(
                                self._eager_auto, type="integer", id="lab-eager-epochs",
                                tooltip=self._eager_tooltip(),
                            )
                            yield Static("", id="lab-eager-note", classes="lab-note")
                    with Horizontal(id="lab-buttons"):
                        yield Button(_("Run"), id="lab-run", variant="success")
                        yield Button(_("Stop"), id="lab-stop", variant="error", disabled=True)
            with VerticalScroll(id="lab-out"):
                yield Static(_("Detecting hardware…"), id="lab-hardware")
                yield Static(_(INTRO), id="lab-headline")
                yield Static("", id="lab-warning")
                # What moves during a run comes first: at 80×24 it is on screen without scrolling.
                yield Vertical(id="lab-rows")
                yield DataTable(id="lab-table", cursor_type="row", zebra_stripes=True)
                yield LossPlot(id="lab-plot")
                yield Static("", id="lab-plot-key")
                yield Static("", id="lab-legend")
                yield Static("", id="lab-ladder")
                yield Static("", id="lab-saved")
        yield CourseFooter()

    @staticmethod
    def _eager_tooltip() -> str:
        return _("Epochs actually run for NNX eager (about a second each on a CPU); "
                 "its full-run time is extrapolated and marked {mark}. "
                 "Same as Epochs for a full run, which it is by default when that takes under {seconds:.0f} s."
                 ).format(mark=EXTRAPOLATED, seconds=FULL_EAGER_S)

    def on_mount(self) -> None:
        self.sub_title = _("Training lab")
        table = self.query_one(DataTable)
        widths, table.header_height = self._column_layout()
        for (label, _figures), width in zip(COLUMNS, widths):
            shown = _(label)
            table.add_column(shown if label == "Variant" else Text(shown, justify="right"), width=width, key=label)
        table.display = False
        self.watch(self.query_one("#lab-epochs", Input), "value", self._epochs_set, init=False)
        self.watch(self.query_one("#lab-eager-epochs", Input), "value", self._eager_set, init=False)
        self.query_one("#lab-variants").loading = True
        self._validate()
        self.set_interval(0.5, self._replot)
        self.set_interval(1.0, self._tick)
        self._detect()

    @work(thread=True, exclusive=True, group="lab-detect", exit_on_error=False, description=N_("detecting hardware"))
    def _detect(self) -> None:
        services = self.app.services
        # The variants first (quick): Run works as soon as they are listed.
        self.post_message(self.Ready(services.lab_variants()))
        self.post_message(self.HardwareFound(services.detect_hardware()))

    async def on_lab_screen_ready(self, event: Ready) -> None:
        self.variants = event.variants
        selection = self.query_one("#lab-variants", SelectionList)
        selection.loading = False
        # The names the table and the ladder below use: they fit 80 columns, the labels do not.
        selection.add_options([(name, name, True) for name in event.variants])
        self._show_ladder()
        self.refresh_bindings()
        if self._run_when_ready:
            self._run_when_ready = False
            await self.action_run()

    def _show_ladder(self) -> None:
        """What each variant is, one line each: the key to the names in the list and the table."""
        if self.variants:
            lines = [_("The variants, one line each:")]
            lines += ladder_lines(list(self.variants))
            self.query_one("#lab-ladder", Static).update(Text("\n".join(lines)))

    def on_lab_screen_hardware_found(self, event: HardwareFound) -> None:
        self.hardware = event.hardware
        self._show_hardware()

    def _show_hardware(self) -> None:
        if self.hardware is None:
            self.query_one("#lab-hardware", Static).update(_("Detecting hardware…"))
        else:
            self.query_one("#lab-hardware", Static).update(
                "[b]" + _("Hardware:") + f"[/b] {escape(self.hardware.describe())}")

    def _headline(self, message: str | None, **values: Any) -> None:
        """Show `message` (marked with N_) with `values`; None: the report's headline."""
        self._headline_said = (message, values)
        text = headline(values["report"]) if message is None else _(message).format(**values)
        self.query_one("#lab-headline", Static).update(text)

    def language_changed(self) -> None:
        """Every label again in the language now in use; the settings, the run and its results stay."""
        self.sub_title = _("Training lab")
        self.query_one("#lab-epochs-label", Label).update(_("Epochs"))
        self.query_one("#lab-eager-label", Label).update(_("Eager NNX epochs"))
        self.query_one("#lab-eager-epochs", Input).tooltip = self._eager_tooltip()
        self.query_one("#lab-run", Button).label = _("Run")
        self.query_one("#lab-stop", Button).label = _("Stop")
        self._show_hardware()
        self._show_ladder()
        for row in self.query(VariantRow).results(VariantRow):
            row.relabel()
        self._fit_columns()
        self._validate()
        self.query_one(LossPlot).language_changed()
        self._headline(*self._headline_said[:1], **self._headline_said[1])
        if self.report is not None and not self.running:
            self._show_report(self.report)
        saved = self.query_one("#lab-saved", Static)
        if getattr(self, "_saved_said", None):
            saved.update(Text(_(self._saved_said[0]).format(**self._saved_said[1])))

    def _column_layout(self) -> tuple[list[int], int]:
        return column_widths([_(label) for label, _figures in COLUMNS], [figures for _label, figures in COLUMNS],
                             self.app.size.width - TABLE_MARGIN)

    def _fit_columns(self) -> None:
        """Headings in the language in use, widths for this terminal."""
        table = self.query_one(DataTable)
        widths, height = self._column_layout()
        for (label, _figures), width in zip(COLUMNS, widths):
            column = table.columns[ColumnKey(label)]
            column.label = Text(_(label), justify="left" if label == "Variant" else "right")
            column.width = width
        table.header_height = height
        # Labels and widths changed in place: the table's render caches are stale (Textual is pinned).
        table._clear_caches()
        table._require_update_dimensions = True
        table.refresh(layout=True)

    def on_resize(self) -> None:
        if self.is_mounted and self.query(DataTable):
            self._fit_columns()

    # -- settings -------------------------------------------------------------------
    def _settings(self) -> tuple[int | None, int | None]:
        """Epochs and eager epochs as they will run (None where a field is unusable), notes updated."""
        epochs, why = parse_epochs(self.query_one("#lab-epochs", Input).value, MAX_EPOCHS)
        self._note("#lab-epochs-note", why, error=True)
        eager, why = parse_epochs(self.query_one("#lab-eager-epochs", Input).value, MAX_EPOCHS)
        if eager is None:
            self._note("#lab-eager-note", why, error=True)
        elif epochs is not None and eager >= epochs:
            # Not an error: more eager epochs than epochs just means the full run.
            self._note("#lab-eager-note", _("runs all {epochs} (above Epochs)").format(epochs=f"{epochs:,}")
                       if eager > epochs else _("runs all, no extrapolation"))
            eager = epochs
        else:
            self._note("#lab-eager-note", _("rest extrapolated ({mark})").format(mark=EXTRAPOLATED))
        return epochs, eager

    def _note(self, selector: str, text: str, *, error: bool = False) -> None:
        note = self.query_one(selector, Static)
        note.update(text)
        note.set_class(error and bool(text), "-error")

    def _validate(self) -> None:
        self._settings()

    @on(Input.Changed)
    def _field_changed(self) -> None:
        self._validate()

    # Watchers, not Changed messages: they run as the value is set, so a value set right
    # after another (by a test, or by this screen) is never overtaken by a stale message.
    def _epochs_set(self, value: str) -> None:
        if self._eager_auto is None:
            return
        epochs, _why = parse_epochs(value, MAX_EPOCHS)
        if epochs is not None:
            self._eager_auto = str(default_eager_epochs(epochs))
            self.query_one("#lab-eager-epochs", Input).value = self._eager_auto

    def _eager_set(self, value: str) -> None:
        if value != self._eager_auto:
            self._eager_auto = None  # the learner's number from now on

    # -- run ------------------------------------------------------------------------
    async def action_run(self) -> None:
        if self.running:
            return
        if not self.variants:
            self._run_when_ready = True
            self._headline(N_("Starting as soon as the variants are listed…"))
            return
        chosen = list(self.query_one("#lab-variants", SelectionList).selected)
        if not chosen:
            self._headline(N_("[b]Tick at least one variant[/b], then Run."))
            self.query_one("#lab-variants").focus()
            return
        epochs, eager = self._settings()
        if epochs is None or (EAGER in chosen and eager is None):
            # The reason stays beside the field, in red; the field gets the focus.
            self.query_one("#lab-epochs" if epochs is None else "#lab-eager-epochs", Input).focus()
            self._headline(N_("[b]Fix the setting marked in red[/b], then Run."))
            return
        per_variant: dict[str, int] = {}
        if EAGER in chosen and eager is not None and eager < epochs:
            per_variant[EAGER] = eager
        rows = self.query_one("#lab-rows")
        # The last run's rows have the same ids: they must be gone before the new ones mount.
        self._run_said = {"count": len(chosen), "epochs": epochs}
        self._run_started, self._eta = time.monotonic(), None
        self.running = True
        # The last run's figures go: its rows would read as this run's.
        table = self.query_one(DataTable)
        table.clear()
        table.display = False
        self.query_one("#lab-legend", Static).update("")
        self._warning([])
        self.query_one("#lab-out").scroll_home(animate=False)
        if isinstance(self.focused, Input) or self.focused is self.query_one("#lab-run"):
            # Where `x` stops the run (a field would type it) and the footer shows it.
            self.query_one("#lab-stop", Button).focus()
        await rows.remove_children()
        await rows.mount_all([VariantRow(v, self.variants.get(v, v), per_variant.get(v, epochs)) for v in chosen])
        self._losses = {v: [] for v in chosen}
        self._plot_dirty = True
        self._cancel = threading.Event()
        self._tick()
        self._train(chosen, epochs, per_variant, self._cancel)

    @work(thread=True, exclusive=True, group="lab", exit_on_error=False, description=N_("training"))
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
            rows.first(VariantRow).show(event.epoch, event.epochs, event.loss)
        if event.eta_s is not None:
            self._eta = (event.eta_s, time.monotonic())
        self._tick()

    def _tick(self) -> None:
        """The headline's clock: time left once every variant has a rate, until then time so far.

        Something moves every second of a run, also while the training process starts
        (JAX's import and first compiles take a while on a busy machine).
        """
        if not self.running or self._cancel.is_set():
            return
        now = time.monotonic()
        if self._eta is not None:
            eta_s, at = self._eta
            left = _("~{time} left").format(time=fmt_seconds(max(0.0, eta_s - (now - at))))
        else:
            seconds = int(now - self._run_started)
            left = _("{time} elapsed").format(time=f"{seconds // 60}:{seconds % 60:02d}")
        self._headline(RUNNING, **self._run_said, left=" " + left)

    def on_lab_screen_finished(self, event: Finished) -> None:
        self.running = False
        if self.focused is None or self.focused is self.query_one("#lab-stop"):
            self.query_one("#lab-run", Button).focus()
        report = event.report
        if report is None:
            self._headline(N_("✗ The run failed; see the message."))
            return
        self.report = report
        self.app.lab_reports.append(report)
        self._show_report(report)

    def _show_report(self, report: Any) -> None:
        table = self.query_one(DataTable)
        table.clear()
        table.display = True
        for r in report.results:
            ok = r.status == "ok"
            numbers = [
                "" if r.compile_s is None or not ok else fmt_seconds(r.compile_s),
                fmt_ms(r.ms_per_epoch) if ok else (_("failed") if r.status == "failed" else _("stopped")),
                _full_run(r) if ok else MISSING,
                fmt_speedup(report.speedup(r.variant, EAGER)),
                fmt_speedup(report.speedup(r.variant, "torch_eager")),
                MISSING if r.test_accuracy is None else f"{r.test_accuracy:.3f}",
            ]
            table.add_row(
                r.variant, *(Text(n, justify="right") for n in numbers),
                key=r.variant,
            )
            rows = self.query(f"#row-{r.variant}")
            if rows:
                # One line: a stopped variant's reason says it was stopped ("stopped after 4 of 50").
                done = _round_summary(r) if ok else "✗ " + (error_text(r) if r.error else _(r.status))
                rows.first(VariantRow).finish(done, len(r.losses), r.epochs)
        self._warning(report.unreliable())
        self.query_one("#lab-legend", Static).update(Text("\n".join(legend_lines(
            [(r.variant, r.epochs) for r in report.results if r.extrapolated], report.config.epochs, app=True))))
        self._set_curves({r.variant: list(r.losses) for r in report.results if r.losses})
        self._plot_dirty = False
        self._headline(None, report=report)

    def _warning(self, reasons: list[dict]) -> None:
        """Whether the ranking holds, said where it is seen before the figures."""
        warning = self.query_one("#lab-warning", Static)
        self._warning_said = reasons
        warning.update(Text("\n".join(unreliable_lines(reasons))))
        warning.display = bool(reasons)

    def _set_curves(self, curves: dict[str, list[float]]) -> None:
        self.query_one(LossPlot).set_curves(curves)
        shown = [v for v, losses in curves.items() if losses]
        width = max(20, self.query_one("#lab-out").size.width - 2)
        self.query_one("#lab-plot-key", Static).update(Text(plot_legend(shown, width) if shown else ""))

    def _replot(self) -> None:
        if not self._plot_dirty or not self.running:
            return
        self._plot_dirty = False
        self._set_curves({v: list(losses) for v, losses in self._losses.items()})

    def action_stop(self) -> None:
        if self.running:
            self._cancel.set()
            self._headline(N_("Stopping…"))

    def action_stop_from_field(self) -> None:
        self.action_stop()

    def action_page_results(self, pages: int) -> None:
        results = self.query_one("#lab-out", VerticalScroll)
        results.scroll_page_down(animate=False) if pages > 0 else results.scroll_page_up(animate=False)

    # -- save ---------------------------------------------------------------------------
    def action_save(self) -> None:
        if self.report is None:
            self.notify(_("Nothing to save yet: run the lab first."))
            return
        self._save(self.report)

    @work(thread=True, exclusive=True, group="lab-save", exit_on_error=False, description=N_("saving results"))
    def _save(self, report: Any) -> None:
        try:
            path = save_report(report.to_dict())
        except OSError as exc:
            self.post_message(self.Saved("", f"{exc.strerror or exc}: {exc.filename or ''}".strip(": ")))
        else:
            self.post_message(self.Saved(str(path)))

    def on_lab_screen_saved(self, event: Saved) -> None:
        saved = self.query_one("#lab-saved", Static)
        if event.error:
            self._saved_said = (N_("✗ Not saved: {error}"), {"error": event.error})
            saved.update(Text(_("✗ Not saved: {error}").format(error=event.error)))
            self.notify(event.error, title=_("Results not saved"), severity="error", markup=False)
            return
        shown = _relative(event.path)
        # Said where it stays visible, not only in a toast.
        self._saved_said = (N_("Saved to {path}"), {"path": shown})
        saved.update(Text(_("Saved to {path}").format(path=shown)))
        self.notify(_("Saved to {path}").format(path=shown), title=_("Results saved"), markup=False)

    # -- buttons and key state --------------------------------------------------------
    @on(Button.Pressed, "#lab-run")
    async def _run_pressed(self) -> None:
        await self.action_run()

    @on(Button.Pressed, "#lab-stop")
    def _stop_pressed(self) -> None:
        self.action_stop()

    @on(Input.Submitted)
    async def _field_submitted(self) -> None:
        await self.action_run()

    def watch_running(self, running: bool) -> None:
        if self.is_mounted:
            self.query_one("#lab-run", Button).disabled = running
            self.query_one("#lab-stop", Button).disabled = not running

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "run":
            return not self.running
        if action == "stop":
            return self.running
        if action == "stop_from_field":
            # Shown in the footer only where `x` would be typed into a field.
            return self.running and isinstance(self.focused, Input)
        if action == "save":
            return None if self.report is None else True
        return True


def _round_summary(r: Any) -> str:
    """`✓ 27.6 ms/epoch, 9 rounds, spread 12%`: the median round and how far to trust it, in one row."""
    text = _("✓ {ms} ms/epoch, {n} rounds, spread {spread}").format(
        ms=fmt_ms(r.ms_per_epoch), n=len(r.rounds_ms), spread=fmt_spread(r.rounds_ms))
    if len(r.rounds_ms) < MIN_ROUNDS:
        text += " " + _("(an estimate)")
    return text


def save_report(data: dict) -> Path:
    """Write a report under the workspace's `.jaxlings/lab/`, never loose in the course folder."""
    from course.paths import state_dir

    folder = state_dir() / "lab"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = folder / f"results-{stamp}.json"
    n = 1
    while path.exists():  # two saves in one second keep both
        n += 1
        path = folder / f"results-{stamp}-{n}.json"
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def _relative(path: str) -> str:
    from course.paths import workspace

    try:
        return str(Path(path).relative_to(workspace()))
    except ValueError:
        return path

"""Turn a `LabReport` into what a terminal shows: a results table, notes and a loss plot."""

from __future__ import annotations

from rich import box
from rich.cells import cell_len
from rich.markup import escape
from rich.table import Table

from course.i18n import _
from course.lab.api import LabReport, VariantResult, error_text
from course.lab.numbers import (EXTRAPOLATED, MISSING, fmt_ms, fmt_speedup, fmt_spread, legend_lines, mark_points,
                                plot_legend, plot_marker, unreliable_lines)
from course.lab.variants import ladder_lines, variant_label


def _num(value: float | None, fmt: str) -> str:
    return MISSING if value is None else format(value, fmt)


def _status(r: VariantResult) -> str:
    status = {"failed": _("failed"), "cancelled": _("cancelled")}.get(r.status, r.status)
    return f"[red]{status}[/red]" if r.status == "failed" else f"[yellow]{status}[/yellow]"


def results_tables(report: LabReport) -> list[Table]:
    """Speed, then what each run learned: two tables that each fit 80 columns."""
    return [speed_table(report), outcome_table(report)]


def speed_table(report: LabReport) -> Table:
    table = Table(title=_("Speed: Titanic MLP, {epochs} epochs, batch {batch}").format(
        epochs=report.config.epochs, batch=report.config.batch_size),
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column(_("Variant"), no_wrap=True)
    for header in (_("Compile s"), "ms/epoch", _("Spread"), _("Full run s"), "×NNX eager", "×PyTorch"):
        table.add_column(header, justify="right", no_wrap=True)
    for r in report.results:
        if r.status != "ok":
            table.add_row(r.variant, MISSING, MISSING, MISSING, _status(r), MISSING, MISSING)
            continue
        mark = EXTRAPOLATED if r.extrapolated else ""
        table.add_row(
            r.variant, "" if r.compile_s is None else f"{r.compile_s:.2f}", fmt_ms(r.ms_per_epoch),
            fmt_spread(r.rounds_ms), f"{_num(r.full_run_s, '.2f')}{mark}",
            fmt_speedup(report.speedup(r.variant, "nnx_eager")), fmt_speedup(report.speedup(r.variant, "torch_eager")),
        )
    return table


def outcome_table(report: LabReport) -> Table:
    table = Table(title=_("Training"), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column(_("Variant"), no_wrap=True)
    table.add_column(_("Input"))
    for header in (_("Epochs"), "steps/s", _("Loss"), _("Acc")):
        table.add_column(header, justify="right", no_wrap=True)
    for r in report.results:
        epochs = f"{len(r.losses)}/{r.epochs}" if r.status != "ok" else (
            f"{r.epochs}/{report.config.epochs}{EXTRAPOLATED}" if r.extrapolated else str(r.epochs))
        table.add_row(r.variant, _(r.input_path) if r.input_path else "", epochs, _num(r.steps_per_s, ",.0f"),
                      _num(r.final_loss, ".4f"), _num(r.test_accuracy, ".3f"))
    return table


def batches_line(report: LabReport) -> str:
    return _("Batches: {steps} batches of {batch} passengers per epoch; the ragged last {dropped} of {n} "
             "passengers are dropped in every variant (one batch shape, one compile) and the data is reshuffled "
             "each epoch.").format(steps=report.steps_per_epoch, batch=report.config.batch_size,
                                   dropped=report.dropped_per_epoch, n=report.n_train)


def legend(report: LabReport) -> list[str]:
    """What the columns mean; the same words as the app's legend."""
    return legend_lines([(r.variant, r.epochs) for r in report.results if r.extrapolated], report.config.epochs)


def warnings(report: LabReport) -> list[str]:
    """Said before the figures when the machine was too busy, or the rounds too few or too far apart, to rank."""
    return [escape(line) for line in unreliable_lines(report.unreliable())]


def notes(report: LabReport) -> list[str]:
    lines = [_("The variants, one line each:")]
    lines += ["  " + escape(line) for line in ladder_lines([r.variant for r in report.results])]
    lines.append(batches_line(report))
    lines += legend(report)
    if any(r.variant == "torch_eager" for r in report.results) and report.hardware.torch_device == "cpu":
        lines.append(_("PyTorch runs on 1 CPU thread: in one process with JAX's CPU runtime, more threads "
                       "contend for the cores and slow this tiny model down."))
    for r in report.results:
        if r.status == "failed":
            label = escape(variant_label(r.variant, r.label))
            lines.append("[red]" + _("{label} failed:").format(label=label) + f"[/red] {escape(error_text(r))}")
        elif r.status == "cancelled":
            lines.append(f"[yellow]{escape(variant_label(r.variant, r.label))}:[/yellow] {escape(error_text(r))}")
    return lines


def loss_plot(results: list[VariantResult], width: int, height: int = 18, *, color: bool = True) -> str:
    """The per-epoch training loss of each variant as plotext text, its key on the last line.

    Each variant has its own plot character, so the curves tell apart without
    colour; the key goes under the plot, where plotext's own legend would sit
    on top of the curves.
    """
    import plotext as plt

    shown = [r for r in results if r.losses]
    if not shown:
        return ""
    plt.clear_figure()
    plt.plotsize(max(40, width), height)
    plt.theme("clear")
    for i, r in enumerate(shown):
        plt.plot(list(range(1, len(r.losses) + 1)), r.losses, marker=plot_marker(r.variant, i))
    # Curves that coincide (same model, same batches) hide each other: every series' mark again, on top.
    for i, (r, points) in enumerate(zip(shown, mark_points([len(r.losses) for r in shown], max(40, width) - 12))):
        if points:
            plt.scatter([p + 1 for p in points], [r.losses[p] for p in points], marker=plot_marker(r.variant, i))
    # plotext lays text out one column per character: a double-width (Japanese) title would
    # shift the plot's frame, so it goes above the plot, centred by cells, as the app puts it
    # on the plot's border; it names the epoch axis already.
    title, xlabel = _("Training loss per epoch"), _("epoch")
    narrow = cell_len(title) == len(title) and cell_len(xlabel) == len(xlabel)
    if narrow:
        plt.title(title)
        plt.xlabel(xlabel)
    text = plt.build()
    plt.clear_figure()
    if not color:
        text = plt.uncolorize(text)
    if not narrow:
        frame = max(cell_len(line) for line in text.splitlines())
        text = " " * max(0, (frame - cell_len(title)) // 2) + title + "\n" + text
    return text + "\n" + plot_legend([r.variant for r in shown], max(40, width))

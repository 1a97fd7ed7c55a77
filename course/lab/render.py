"""Turn a `LabReport` into what a terminal shows: a results table, notes and a loss plot."""

from __future__ import annotations

from rich import box
from rich.table import Table

from course.lab.api import LabReport, VariantResult


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _times(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}×" if value < 1 else f"{value:,.1f}×"


def results_table(report: LabReport) -> Table:
    speed = report.speedups()["steady_state"]
    table = Table(title=f"Titanic MLP, {report.config.epochs} epochs, batch {report.config.batch_size}",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    for header, justify in [
        ("Variant", "left"), ("Input", "left"), ("Epochs", "right"), ("Compile s", "right"),
        ("Total s", "right"), ("ms/epoch", "right"), ("steps/s", "right"), ("Loss", "right"),
        ("Acc", "right"), ("×NNX eager", "right"), ("×PyTorch", "right"),
    ]:
        table.add_column(header, justify=justify, no_wrap=header in ("Variant", "Epochs"))
    for r in report.results:
        if r.status != "ok":
            table.add_row(r.variant, r.input_path, f"{len(r.losses)}/{r.epochs}", *["-"] * 6,
                          f"[red]{r.status}[/red]" if r.status == "failed" else f"[yellow]{r.status}[/yellow]", "-")
            continue
        mark = "*" if r.extrapolated else ""
        table.add_row(
            r.variant, r.input_path,
            f"{r.epochs}{mark}" if not r.extrapolated else f"{r.epochs}/{report.config.epochs}*",
            _num(r.compile_s, ".2f"), f"{_num(r.full_run_s, '.2f')}{mark}", _num(r.ms_per_epoch, ".2f"),
            _num(r.steps_per_s, ",.0f"), _num(r.final_loss, ".4f"), _num(r.test_accuracy, ".3f"),
            _times(speed["vs_nnx_eager"].get(r.variant)), _times(speed["vs_torch_eager"].get(r.variant)),
        )
    return table


def notes(report: LabReport) -> list[str]:
    lines = [
        "Variants: " + "; ".join(f"{r.variant} = {r.label}" for r in report.results) + ".",
        f"Batches: {report.steps_per_epoch} of {report.config.batch_size} per epoch; the ragged last "
        f"{report.dropped_per_epoch} of {report.n_train} passengers are dropped in every variant "
        "(one batch shape, one compile) and the data is reshuffled each epoch.",
        "Compile s: the first step (trace + compile for jit; warm-up for eager). ms/epoch, steps/s and "
        "the speedups are steady state, after it. Total s: init + compile + training, blocked on the result.",
    ]
    extrapolated = [r for r in report.results if r.extrapolated]
    for r in extrapolated:
        lines.append(f"* {r.label}: ran {r.epochs} of {report.config.epochs} epochs; its total is "
                     "extrapolated from the measured ms/epoch, and its accuracy is after "
                     f"{r.epochs} epochs.")
    if any(r.variant == "torch_eager" for r in report.results) and report.hardware.torch_device == "cpu":
        lines.append("PyTorch runs on 1 CPU thread: in one process with JAX's CPU runtime, more threads "
                     "contend for the cores and slow this tiny model down.")
    for r in report.results:
        if r.status == "failed":
            lines.append(f"[red]{r.label} failed:[/red] {r.error}")
        elif r.status == "cancelled":
            lines.append(f"[yellow]{r.label}:[/yellow] {r.error}")
    return lines


def loss_plot(results: list[VariantResult], width: int, height: int = 18, *, color: bool = True) -> str:
    """The per-epoch training loss of each variant, as plotext text."""
    import plotext as plt

    plt.clear_figure()
    plt.plotsize(max(40, width), height)
    plt.theme("clear")
    shown = False
    for r in results:
        if r.losses:
            plt.plot(list(range(1, len(r.losses) + 1)), r.losses, label=r.variant)
            shown = True
    if not shown:
        return ""
    plt.title("Training loss per epoch")
    plt.xlabel("epoch")
    text = plt.build()
    plt.clear_figure()
    return text if color else plt.uncolorize(text)

"""`jaxlings train`: run the training lab in the terminal.

Exit codes: 0 all variants finished, 1 a variant failed, 2 bad arguments or
data, 130 interrupted (Ctrl-C; what finished is still printed and saved).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from rich.markup import escape

from course.i18n import _
from course.lab.api import (EAGER_SAMPLE_EPOCHS, FULL_EAGER_S, NNX_EAGER_S_PER_EPOCH_CPU, VARIANTS, LabConfig,
                            LabConfigError, default_eager_epochs)
from course.lab.numbers import EXTRAPOLATED
from course.lab.variants import variant_label

# The progress bars' label column, in terminal cells (double-width Japanese counts twice).
LABEL_CELLS = 34


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = _(
        "Train the article's Titanic model (MLP 9→64→1, Adam 1e-3, batch 32) in PyTorch and in JAX, "
        "with and without jit, on this machine's hardware, and compare time and accuracy."
    )
    parser.epilog = _("Variants: {variants}").format(variants="; ".join(
        f"{k} = {variant_label(k)}" for k in VARIANTS))
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help=_("comma-separated variants to run, in order (default: all)"))
    parser.add_argument("--epochs", type=int, default=500,
                        help=_("epochs per variant (default: 500, as in the article)"))
    parser.add_argument("--eager-epochs", type=int, default=None, metavar="N",
                        help=_("epochs for the slow NNX eager variant (default: all of --epochs when that takes "
                               "under {seconds:.0f} s on a CPU, else {default}); a shorter run's full-run time is "
                               "extrapolated and marked {mark}").format(
                            seconds=FULL_EAGER_S, default=EAGER_SAMPLE_EPOCHS, mark=EXTRAPOLATED))
    parser.add_argument("--batch-size", type=int, default=32, help=_("batch size (default: 32)"))
    parser.add_argument("--seed", type=int, default=0, help=_("seed for the split, init and shuffling (default: 0)"))
    parser.add_argument("--data", metavar="PATH",
                        help=_("a Kaggle train.csv or titanic3 file (default: the bundled list)"))
    parser.add_argument("--json", metavar="PATH", help=_("also write every number, versions and device as JSON"))
    parser.add_argument("--no-plot", action="store_true", help=_("skip the loss plot"))


def stdout_console(file=None):
    """The report's console: as wide as the terminal, also behind a pipe (`| tee`, `| less`), and
    80 columns where there is no terminal at all (rich's fallback), never wider."""
    from rich.console import Console

    return Console(file=file)


def build_config(args: argparse.Namespace) -> LabConfig:
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    config = LabConfig(variants=variants, epochs=args.epochs, batch_size=args.batch_size, seed=args.seed,
                       data_path=args.data)
    if "nnx_eager" in variants:
        eager = args.eager_epochs if args.eager_epochs is not None else default_eager_epochs(args.epochs)
        if eager != args.epochs:
            config.epochs_per_variant["nnx_eager"] = eager
    config.validate()
    return config


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from course.titanic import TitanicDataError

    out, err = stdout_console(), Console(stderr=True)
    try:
        config = build_config(args)
    except LabConfigError as exc:
        err.print(f"[red]jaxlings train:[/red] {exc}")
        return 2
    if args.data:
        # Checked before the slow part (importing JAX and PyTorch), so a typo fails fast.
        from course.titanic import read_passengers

        try:
            read_passengers(args.data)
        except TitanicDataError as exc:
            err.print(f"[red]jaxlings train:[/red] {exc}")
            return 2
    if args.json and not Path(args.json).resolve().parent.is_dir():
        err.print("[red]jaxlings train:[/red] " + _("cannot write --json {path}: its folder does not exist").format(
            path=escape(args.json)))
        return 2

    from course.lab.api import detect_hardware, run_lab

    cancel = threading.Event()
    # Installed before anything is printed, so that a Ctrl-C at any point from here stops cleanly.
    restore = _stop_on_ctrl_c(cancel, err)
    try:
        hardware = detect_hardware()
        err.print(_("Running on: {hardware}").format(hardware=escape(hardware.describe())))
        _warn_about_eager(config, hardware, err)
        with _LiveProgress(err) as progress:
            report = run_lab(config, on_progress=progress.update, cancel=cancel, hardware=hardware,
                             on_start=progress.start)
    except (LabConfigError, TitanicDataError) as exc:
        err.print(f"[red]jaxlings train:[/red] {exc}")
        return 2
    finally:
        restore()

    _print_report(report, out, plot=not args.no_plot)
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
        err.print(_("Wrote {path}").format(path=escape(args.json)))
    if report.cancelled:
        return 130
    return 1 if report.failed else 0


def _warn_about_eager(config: LabConfig, hardware, err) -> None:
    if "nnx_eager" not in config.variants:
        return
    eager = config.epochs_for("nnx_eager")
    full = _duration(NNX_EAGER_S_PER_EPOCH_CPU * config.epochs)
    where = _("on a 2-core CPU") if hardware.jax_platform == "cpu" else _("on a 2-core CPU (this accelerator may differ)")
    if eager < config.epochs:
        err.print(_("NNX eager (no jit) takes ~{seconds} s per epoch {where}: {epochs} epochs would take ~{full}. "
                    "Running it for {eager} epochs and extrapolating (marked {mark}); use --eager-epochs {epochs} "
                    "for the full run.").format(seconds=NNX_EAGER_S_PER_EPOCH_CPU, where=where, epochs=config.epochs,
                                                full=full, eager=eager, mark=EXTRAPOLATED))
    elif NNX_EAGER_S_PER_EPOCH_CPU * eager > 60:
        err.print(_("NNX eager (no jit) will take ~{full} for {eager} epochs {where}. "
                    "Ctrl-C stops and still shows what finished.").format(full=full, eager=eager, where=where))


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _stop_on_ctrl_c(cancel: threading.Event, err):
    """First Ctrl-C asks the lab to stop after the current batch; a second one aborts."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)

    def handler(signum, frame):
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        err.print("\n[yellow]" + _("Stopping after the current batch… (Ctrl-C again to abort)") + "[/yellow]")

    signal.signal(signal.SIGINT, handler)
    return lambda: signal.signal(signal.SIGINT, previous)


class _LiveProgress:
    """One rich progress bar per variant: epoch, loss, elapsed and ETA."""

    def __init__(self, console):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn(escape(_("loss")) + " {task.fields[loss]}"), TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]}"),
            console=console, transient=False,
        )
        self._tasks: dict[str, int] = {}
        # A file or pipe gets no live bar: one line per variant says where the run is.
        self._log = None if console.is_terminal else console

    def __enter__(self):
        self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self._bar.__exit__(*exc)

    def start(self, variant: str, epochs: int) -> None:
        if self._log is not None:
            self._log.print(_("Training {variant}: {epochs} epochs").format(variant=variant, epochs=epochs))
        self._task(variant, epochs)

    def _task(self, variant: str, epochs: int) -> int:
        if variant not in self._tasks:
            self._tasks[variant] = self._bar.add_task(escape(_padded(variant_label(variant))), total=epochs, loss="-",
                                                      eta="-")
        return self._tasks[variant]

    def update(self, p) -> None:
        self._task(p.variant, p.epochs)
        # The whole run's time left (the variants take turns), shown on the bars still running.
        eta = "-" if p.eta_s is None or p.epoch >= p.epochs else (
            f"{p.eta_s:.0f}s" if p.eta_s < 120 else f"{p.eta_s / 60:.1f}min")
        self._bar.update(self._tasks[p.variant], completed=p.epoch, loss=f"{p.loss:.4f}", eta=eta)


def _padded(label: str) -> str:
    """`label` padded to LABEL_CELLS terminal cells, so that the bars after it line up in any language."""
    from rich.cells import cell_len

    return label + " " * max(0, LABEL_CELLS - cell_len(label))


def _print_report(report, out, *, plot: bool) -> None:
    from course.lab.render import loss_plot, notes, results_tables, warnings

    out.print()
    out.print(_("Hardware: {hardware}").format(hardware=escape(report.hardware.describe())))
    for i, line in enumerate(warnings(report)):
        out.print(f"[yellow]{line}[/yellow]" if i == 0 else "  " + line)
    for table in results_tables(report):
        out.print(table)
    for line in notes(report):
        out.print(line)
    if plot:
        text = loss_plot(report.results, width=min(out.width, 100), color=out.is_terminal)
        if text:
            out.print()
            sys.stdout.flush()
            print(text)

"""The training lab: every variant learns the same model, Stop works, the report and CLI hold their promises."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from course.lab import api
from course.lab.api import VARIANTS, LabConfig, LabConfigError, LabReport, Progress, run_lab
from course.lab.child import LabChildError, run_lab_in_child
from course.lab.numbers import PLOT_MARKERS, SPEEDUP_BASIS, fmt_speedup, median, spread, unreliable_reasons
from course.titanic import TitanicDataError

ROOT = Path(__file__).resolve().parents[1]
EPOCHS = 15
EAGER_EPOCHS = 5


@pytest.fixture(scope="module")
def short_run():
    progress: list[Progress] = []
    config = LabConfig(variants=list(VARIANTS), epochs=EPOCHS, epochs_per_variant={"nnx_eager": EAGER_EPOCHS})
    return run_lab(config, on_progress=progress.append), progress


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_each_variant_learns_the_titanic_model(short_run, variant):
    report, _ = short_run
    r = report.result(variant)
    assert r.status == "ok", r.traceback
    epochs = EAGER_EPOCHS if variant == "nnx_eager" else EPOCHS
    assert r.epochs == epochs and len(r.losses) == epochs
    assert np.mean(r.losses[-3:]) < np.mean(r.losses[:3]) - 0.05, r.losses
    assert r.final_loss == r.losses[-1] < 0.6
    assert r.test_accuracy >= 0.76, f"{variant}: test accuracy {r.test_accuracy:.3f}"
    assert r.steps == epochs * (891 // 32)


def test_variants_reach_comparable_accuracy(short_run):
    report, _ = short_run
    accuracies = [r.test_accuracy for r in report.results if r.variant != "nnx_eager"]
    assert max(accuracies) - min(accuracies) <= 0.04, accuracies


def test_nnx_jit_tree_mode_and_split_merge_are_the_same_computation(short_run):
    # Same init, same batches, same step: only how it is compiled and called differs.
    report, _ = short_run
    jit = report.result("nnx_jit")
    for variant in ("nnx_tree", "nnx_split_merge"):
        np.testing.assert_allclose(jit.losses, report.result(variant).losses, rtol=1e-4, err_msg=variant)
        assert report.result(variant).test_accuracy == jit.test_accuracy, variant


def test_the_ladder_runs_from_eager_to_the_fused_loop_with_a_line_for_each_rung():
    from course.lab.variants import REGISTRY, ladder_lines

    assert list(VARIANTS) == ["torch_eager", "nnx_eager", "nnx_jit", "nnx_tree", "nnx_split_merge", "linen_jit",
                              "jax_scan"]
    lines = ladder_lines(list(VARIANTS))
    assert [line.split()[0] for line in lines] == list(VARIANTS)
    assert all(REGISTRY[v].rung and len(line) <= 76 for v, line in zip(VARIANTS, lines)), lines
    assert "graph=False" in lines[3]


def test_nnx_eager_runs_in_full_when_that_takes_seconds(monkeypatch):
    from course.lab.cli import add_arguments, build_config

    parser = __import__("argparse").ArgumentParser()
    add_arguments(parser)
    full = int(api.FULL_EAGER_S / api.NNX_EAGER_S_PER_EPOCH_CPU)
    assert 50 <= full < 100  # a 50-epoch run is seconds of eager NNX; 100 is over a minute
    assert build_config(parser.parse_args(["--epochs", "50"])).epochs_for("nnx_eager") == 50
    assert build_config(parser.parse_args(["--epochs", str(full)])).epochs_for("nnx_eager") == full
    assert build_config(parser.parse_args(["--epochs", str(full + 1)])).epochs_for("nnx_eager") == 20
    assert build_config(parser.parse_args(["--epochs", "500"])).epochs_for("nnx_eager") == 20
    assert build_config(parser.parse_args(["--epochs", "50", "--eager-epochs", "7"])).epochs_for("nnx_eager") == 7


def test_timing_is_split_into_compile_and_steady_state(short_run):
    report, _ = short_run
    for r in report.results:
        assert r.first_step_s > 0 and r.init_s >= 0, r.variant
        assert r.total_s >= r.init_s + r.first_step_s, r.variant
        assert r.ms_per_epoch > 0 and r.steps_per_s > 0, r.variant
        assert r.ms_per_epoch == pytest.approx(1000 * (891 // 32) / r.steps_per_s)
        # Eager code compiles nothing: its first step is a warm-up, not a compile time.
        assert (r.compile_s is None) == r.variant.endswith("_eager"), r.variant
        assert r.compile_s is None or r.compile_s == r.first_step_s
    eager = report.result("nnx_eager")
    assert eager.extrapolated and eager.full_run_s > eager.total_s
    jit = report.result("nnx_jit")
    assert not jit.extrapolated and jit.full_run_s == jit.total_s


def test_progress_reports_every_variant_up_to_its_last_epoch(short_run):
    report, progress = short_run
    for r in report.results:
        mine = [p for p in progress if p.variant == r.variant]
        assert mine and mine[-1].epoch == r.epochs == mine[-1].epochs
        assert mine[-1].loss == pytest.approx(r.losses[-1])
        assert [p.epoch for p in mine] == sorted(p.epoch for p in mine)


def test_speedups_compare_with_both_baselines_on_one_basis(short_run):
    report, _ = short_run
    speed = report.speedups()
    assert speed["basis"] == SPEEDUP_BASIS and "steady-state ms per epoch" in SPEEDUP_BASIS
    assert speed["vs_nnx_eager"]["nnx_eager"] == pytest.approx(1.0)
    assert speed["vs_torch_eager"]["torch_eager"] == pytest.approx(1.0)
    eager, jit = report.result("nnx_eager"), report.result("nnx_jit")
    assert speed["vs_nnx_eager"]["nnx_jit"] == report.speedup("nnx_jit", "nnx_eager") == pytest.approx(
        eager.ms_per_epoch / jit.ms_per_epoch)


def test_json_report_schema(short_run):
    report, _ = short_run
    data = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert data["schema_version"] == api.SCHEMA_VERSION == 3
    assert set(data) == {"schema_version", "measurement", "cancelled", "hardware", "config", "data", "versions",
                         "results", "speedups"}
    assert set(data["measurement"]) == {"method", "load_average", "cpu_count", "unreliable"}
    assert data["hardware"]["jax_platform"] and data["hardware"]["jax_devices"]
    assert {"jax", "flax", "optax", "torch", "python", "jaxlings"} <= set(data["versions"])
    assert data["data"] == {**data["data"], "n_train": 891, "n_test": 418, "steps_per_epoch": 27, "dropped_per_epoch": 27}
    assert [r["variant"] for r in data["results"]] == list(VARIANTS)
    for r in data["results"]:
        for key in ("label", "epochs", "compile_s", "first_step_s", "total_s", "ms_per_epoch", "steps_per_s",
                    "final_loss", "test_accuracy", "losses", "status", "error", "input_path", "full_run_s",
                    "extrapolated", "rounds_ms"):
            assert key in r
        # Every variant timed in several rounds; its ms/epoch is their median.
        assert len(r["rounds_ms"]) >= 3 and r["ms_per_epoch"] == pytest.approx(median(r["rounds_ms"]))
    assert set(data["speedups"]) == {"basis", "vs_nnx_eager", "vs_torch_eager"}


def test_report_survives_its_json_form(short_run):
    report, _ = short_run
    again = LabReport.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.to_dict() == report.to_dict()
    assert again.speedups() == report.speedups()


# --- what the terminal shows: built from a report with known numbers --------------

# A 2-core CPU's steady-state ms/epoch: a 2,000x range, from NNX eager to the fused loop.
MS_PER_EPOCH = {"torch_eager": 21.4, "nnx_eager": 862.0, "nnx_jit": 27.6, "nnx_tree": 6.02, "nnx_split_merge": 4.81,
                "linen_jit": 2.03, "jax_scan": 0.381}


def known_report(epochs: int = 500, eager_epochs: int = 20) -> LabReport:
    config = LabConfig(list(VARIANTS), epochs=epochs, epochs_per_variant={"nnx_eager": eager_epochs})
    results = []
    for i, (variant, ms) in enumerate(MS_PER_EPOCH.items()):
        n, eager = config.epochs_for(variant), variant.endswith("_eager")
        results.append(api.VariantResult(
            variant=variant, label=VARIANTS[variant], epochs=n, compile_s=None if eager else 0.4 + i / 10,
            first_step_s=0.05 if eager else 0.4 + i / 10, total_s=ms * n / 1000, ms_per_epoch=ms,
            steps_per_s=27_000 / ms, final_loss=0.43 + i / 1000, test_accuracy=0.79 + i / 1000,
            losses=[0.68 - 0.045 * i - 0.1 * k / n for k in range(n)], status="ok", input_path=api.INPUT_PATHS[variant],
            full_run_s=ms * epochs / 1000, extrapolated=n < epochs, rounds_ms=[ms * 0.98, ms, ms * 1.02, ms]))
    hardware = api.Hardware("cpu", ["cpu:0"], "cpu", "JAX on CPU (1 device: cpu); PyTorch on cpu; 2 CPU cores", 2)
    return LabReport(hardware, config, results, {}, steps_per_epoch=27, dropped_per_epoch=27, n_train=891, n_test=418)


def printed_report(report: LabReport, width: int, plot: bool = False) -> str:
    from rich.console import Console

    from course.lab.cli import _print_report

    console = Console(width=width, record=True, color_system=None, file=open(os.devnull, "w"))
    _print_report(report, console, plot=plot)
    return console.export_text()


def test_cli_report_is_readable_at_80_columns():
    report = known_report()
    text = printed_report(report, 80)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    for r in report.results:
        assert fmt_speedup(report.speedup(r.variant, "nnx_eager")) in text
        assert fmt_speedup(report.speedup(r.variant, "torch_eager")) in text
        assert f"{r.test_accuracy:.3f}" in text and f"{r.final_loss:.4f}" in text
    # The slowest variant against the fastest baseline is a small ratio, not 0.0×.
    assert "0.025×" in text and "0.0×" not in text


def test_speedups_keep_two_significant_digits_below_one():
    assert [fmt_speedup(x) for x in (2268.4, 32.24, 1.0, 0.776, 0.0248, 0.00123, None)] == [
        "2,268×", "32.2×", "1.0×", "0.78×", "0.025×", "0.0012×", "-"]


def table_rows(text: str, title: str) -> dict[str, list[str]]:
    """The rows of one printed table, by variant, split into cells on runs of 2+ spaces."""
    import re

    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith(title))
    rows = {}
    for line in lines[start + 1:]:
        cells = re.split(r"\s{2,}", line.strip())
        if cells[0] in VARIANTS:
            rows[cells[0]] = cells
        elif rows and not line.strip():
            break
    return rows


def test_cli_leaves_compile_empty_for_eager_variants_and_marks_extrapolation_once():
    text = printed_report(known_report(), 80)
    speed = table_rows(text, "Speed")
    # Variant, Compile s, ms/epoch, Spread, Full run s, ×NNX eager, ×PyTorch: eager rows have one cell fewer.
    assert len(speed["torch_eager"]) == len(speed["nnx_eager"]) == 6
    assert len(speed["nnx_jit"]) == 7 and speed["nnx_jit"][1] == "0.60" and speed["nnx_jit"][3] == "4%"
    assert speed["nnx_eager"][3] == "431.00*" and "* extrapolated from 20 epochs to 500" in text
    assert "≈" not in text


def test_cli_loss_plot_tells_variants_apart_without_colour_and_keeps_its_key_off_the_curves(capsys):
    printed_report(known_report(epochs=60, eager_epochs=20), 80, plot=True)
    plot = capsys.readouterr().out
    lines = plot.splitlines()
    axis = next(i for i, line in enumerate(lines) if line.strip() == "epoch")
    canvas, key = "\n".join(lines[:axis]), "\n".join(lines[axis + 1:])
    assert "Training loss per epoch" in canvas
    for variant, marker in PLOT_MARKERS.items():
        assert marker in canvas, variant  # every curve is drawn with its own character
        assert f"{marker} {variant}" in key
        assert variant not in canvas  # the key is not printed over the curves
    assert "\x1b[" not in plot


def test_cli_loss_plot_shows_every_mark_when_the_curves_coincide(capsys):
    # nnx_jit, nnx_tree and nnx_split_merge train the same model on the same batches: equal losses.
    report = known_report(epochs=60, eager_epochs=20)
    for r in report.results:
        r.losses = [0.7 - 0.2 * k / len(r.losses) for k in range(len(r.losses))]
    printed_report(report, 80, plot=True)
    lines = capsys.readouterr().out.splitlines()
    axis = next(i for i, line in enumerate(lines) if line.strip() == "epoch")
    canvas = "\n".join(line for line in lines[:axis] if "Training loss" not in line)
    for variant, marker in PLOT_MARKERS.items():
        assert canvas.count(marker) >= 2, (variant, canvas)


def test_cli_notes_explain_the_batches_and_every_rung():
    text = printed_report(known_report(), 80)
    assert "Batches: 27 batches of 32 passengers per epoch" in text
    assert "27 of 32" not in text
    for variant in VARIANTS:
        assert any(line.strip().startswith(variant + " ") for line in text.splitlines()), variant
    assert max(len(line) for line in text.splitlines()) <= 80


def test_version_1_reports_still_load():
    data = known_report().to_dict()
    data["schema_version"] = 1
    for r in data["results"]:
        del r["first_step_s"]
    assert LabReport.from_dict(data).result("jax_scan").ms_per_epoch == MS_PER_EPOCH["jax_scan"]


def test_child_process_run_reports_progress_and_the_same_kind_of_results():
    """The app trains in a child process; what comes back is a full report."""
    progress: list[Progress] = []
    report = run_lab_in_child(LabConfig(variants=["torch_eager", "linen_jit"], epochs=6), on_progress=progress.append)
    assert [r.status for r in report.results] == ["ok", "ok"]
    assert all(len(r.losses) == 6 and r.test_accuracy > 0.6 and r.ms_per_epoch > 0 for r in report.results)
    assert {p.variant for p in progress} == {"torch_eager", "linen_jit"}
    assert all(isinstance(p, Progress) and p.epoch <= 6 for p in progress)
    assert report.speedup("linen_jit", "torch_eager") > 0


def test_child_process_run_stops_and_keeps_what_finished():
    cancel = threading.Event()

    def on_progress(p: Progress) -> None:
        if p.variant == "nnx_jit" and p.epoch >= 2:
            cancel.set()

    report = run_lab_in_child(LabConfig(variants=["linen_jit", "nnx_jit", "jax_scan"], epochs=3000),
                              on_progress=on_progress, cancel=cancel)
    linen, jit, scan = report.results
    # The variants take turns: linen_jit had its first turn, nnx_jit was stopped in its own.
    assert report.cancelled and linen.status == "cancelled" and 1 <= len(linen.losses) < 3000
    assert jit.status == "cancelled" and 2 <= len(jit.losses) < 3000
    assert scan.status == "cancelled"  # not started, or stopped in its first turn: Stop crosses a pipe


def test_child_process_errors_are_the_labs_own():
    with pytest.raises(TitanicDataError, match="no such file"):
        run_lab_in_child(LabConfig(variants=["torch_eager"], epochs=2, data_path="/no/such/train.csv"))
    with pytest.raises(LabConfigError, match="unknown variant"):
        run_lab_in_child(LabConfig(variants=["resnet"], epochs=2))
    # A child that dies (here: a Python without the course on its path) is a clear error, not a hang.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with pytest.raises(LabChildError, match="exit code"):
        run_lab_in_child(LabConfig(variants=["torch_eager"], epochs=2), python="/bin/false", env=env)


class StopAfter(threading.Event):
    """A Stop button pressed after `n` checks: proves Stop is looked at every batch."""

    def __init__(self, n: int):
        super().__init__()
        self.calls = 0
        self.n = n

    def is_set(self) -> bool:
        self.calls += 1
        return self.calls > self.n or super().is_set()


def test_stop_takes_effect_within_a_batch_even_in_nnx_eager():
    cancel = StopAfter(5)
    report = run_lab(LabConfig(variants=["nnx_eager", "linen_jit"], epochs=500), cancel=cancel)
    eager, linen = report.results
    assert report.cancelled
    assert eager.status == "cancelled" and eager.losses == [] and eager.steps <= 5
    assert linen.status == "cancelled" and "not started" in linen.error


def test_stop_keeps_what_finished():
    cancel = threading.Event()

    def on_progress(p: Progress) -> None:
        if p.variant == "nnx_jit" and p.epoch >= 2:
            cancel.set()

    report = run_lab(LabConfig(variants=["linen_jit", "nnx_jit", "jax_scan"], epochs=30),
                     on_progress=on_progress, cancel=cancel)
    linen, jit, scan = report.results
    # linen_jit's turns came before and between nnx_jit's.
    assert linen.status == "cancelled" and 1 <= len(linen.losses) < 30 and "stopped after" in linen.error
    assert jit.status == "cancelled" and 2 <= len(jit.losses) < 30
    assert scan.status == "cancelled" and "not started" in scan.error
    json.dumps(report.to_dict(), allow_nan=False)


def test_a_failing_variant_is_reported_and_the_others_still_run(monkeypatch):
    real_load = api.load

    def load(name):
        if name == "linen_jit":
            def broken(ctx):
                raise RuntimeError("simulated out-of-memory")
            return broken
        return real_load(name)

    monkeypatch.setattr(api, "load", load)
    report = run_lab(LabConfig(variants=["linen_jit", "nnx_split_merge"], epochs=2))
    broken, ok = report.results
    assert broken.status == "failed" and "simulated out-of-memory" in broken.error and broken.traceback
    assert ok.status == "ok"
    assert report.failed and report.speedups()["vs_torch_eager"]["nnx_split_merge"] is None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"variants": ["nnx_jit", "tf_keras"]}, "unknown variant"),
        ({"variants": []}, "no variant"),
        ({"epochs": 0}, "epochs must be"),
        ({"batch_size": -1}, "batch_size must be"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"epochs_per_variant": {"nnx_eager": 600}}, "between 1 and 500"),
    ],
)
def test_bad_settings_are_refused_before_anything_runs(changes, message):
    config = LabConfig(variants=["nnx_jit"])
    for key, value in changes.items():
        setattr(config, key, value)
    with pytest.raises(LabConfigError, match=message):
        run_lab(config)


# --- the `jaxlings train` command, run as a learner runs it -------------------------

def jaxlings(*args, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
    return subprocess.run([sys.executable, "-m", "course", "train", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=240, **kwargs)


def test_cli_runs_writes_json_and_exits_zero_and_wraps_a_pipe_at_80_columns(tmp_path):
    out = tmp_path / "lab.json"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    # No terminal anywhere (as under `| tee` in a script, or cron): 80 columns, as a file reads best.
    proc = subprocess.run([sys.executable, "-m", "course", "train", "--variants", "linen_jit,jax_scan", "--epochs",
                           "3", "--json", str(out)], capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL,
                          env={**env, "PYTHONPATH": str(ROOT)}, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert max(len(line) for line in proc.stdout.splitlines()) <= 80, max(proc.stdout.splitlines(), key=len)
    assert "Running on: JAX on" in proc.stderr
    assert "linen_jit" in proc.stdout and "jax_scan" in proc.stdout and "dropped" in proc.stdout
    assert "Training loss per epoch" in proc.stdout
    data = json.loads(out.read_text())
    assert data["schema_version"] == 3 and [r["status"] for r in data["results"]] == ["ok", "ok"]
    assert data["measurement"]["cpu_count"] == os.cpu_count() and len(data["measurement"]["load_average"]) == 2
    assert data["config"]["epochs"] == 3 and len(data["results"][1]["losses"]) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--variants", "nnx_jit,keras"], "unknown variant(s) keras"),
        (["--epochs", "0"], "epochs must be"),
        (["--data", "/nonexistent/train.csv"], "no such file"),
        (["--json", "/nonexistent/dir/out.json"], "folder does not exist"),
    ],
)
def test_cli_bad_arguments_and_data_exit_2_without_a_traceback(args, message):
    proc = jaxlings("--variants", "linen_jit", "--epochs", "1", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_cli_exits_1_when_a_variant_fails(tmp_path):
    # The same command, with one variant broken from outside the product code.
    script = (
        "import sys\n"
        "from course.lab import api\n"
        "real = api.load\n"
        "def load(name):\n"
        "    if name != 'linen_jit':\n"
        "        return real(name)\n"
        "    def broken(ctx):\n"
        "        raise FloatingPointError('loss became NaN')\n"
        "    return broken\n"
        "api.load = load\n"
        "from course.cli import main\n"
        "sys.exit(main(['train', '--variants', 'linen_jit', '--epochs', '2', '--no-plot']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=240,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"})
    assert proc.returncode == 1, proc.stderr
    assert "loss became NaN" in proc.stdout and "failed" in proc.stdout


def test_cli_ctrl_c_stops_cleanly_prints_and_exits_130(tmp_path):
    out = tmp_path / "lab.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "160"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "course", "train", "--variants", "nnx_eager,linen_jit", "--no-plot", "--json", str(out)],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    before: list[str] = []
    try:
        # Synchronise on what the command says, not on time: "Training nnx_eager" is printed
        # once training starts, after every note about the settings.
        for line in proc.stderr:
            before.append(line)
            if line.startswith("Training nnx_eager"):
                break
        proc.send_signal(signal.SIGINT)
        stdout, rest = proc.communicate(timeout=120)
    finally:
        proc.kill()
    stderr = "".join(before) + rest
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    # NNX eager's default 500 epochs would take minutes: the lab said so before it started.
    assert "Running it for 20 epochs and extrapolating" in " ".join("".join(before).split())
    assert "cancelled" in stdout
    data = json.loads(out.read_text())
    assert data["cancelled"] is True and all(r["status"] == "cancelled" for r in data["results"])


def test_lab_never_imports_textual():
    code = (
        "import sys\n"
        "import course.lab.api, course.lab.cli, course.lab.render, course.lab.torch_data, course.titanic\n"
        "from course.lab.variants import REGISTRY, load\n"
        "for name in REGISTRY: load(name)\n"
        "print('textual' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.stdout.strip() == "False"


# --- measuring under load: turns, rounds, median, spread, saying when to doubt -----

def test_median_and_spread_of_rounds():
    assert median([3.0, 1.0, 2.0]) == 2.0 and median([4.0, 1.0, 2.0, 3.0]) == 2.5
    assert spread([10.0, 10.0, 10.0]) == 0.0
    assert spread([9.0, 10.0, 16.0]) == pytest.approx(0.7)
    assert spread([10.0]) is None


def test_a_busy_machine_or_rounds_far_apart_or_too_few_make_the_ranking_unreliable():
    calm = {"nnx_jit": [27.0, 28.0, 27.5, 27.2], "jax_scan": [0.38, 0.40, 0.39]}
    assert unreliable_reasons([0.9, 1.2], 2, calm) == []
    assert unreliable_reasons([None, None], 2, calm) == []  # no load average here: the spread still speaks
    assert unreliable_reasons([1.0, 3.4], 2, calm) == [{"reason": "load", "load": 3.4, "cpu_count": 2}]
    noisy = {**calm, "nnx_tree": [16.0, 39.0, 17.0, 15.5]}  # one round in a burst: (39 - 15.5) / 16.5 > 0.5
    assert unreliable_reasons([0.5, 0.5], 2, noisy) == [{"reason": "spread", "variant": "nnx_tree", "spread": 1.424}]
    # One sample is no median: never extrapolated from in silence.
    assert unreliable_reasons([0.5, 0.5], 2, {"nnx_eager": [860.0]}) == [
        {"reason": "few_rounds", "variant": "nnx_eager", "rounds": 1}]


def test_the_cli_says_when_the_ranking_may_not_hold():
    report = known_report()
    assert "may not hold" not in printed_report(report, 80)
    report.load_start, report.load_end = 1.0, 5.5
    report.result("nnx_tree").rounds_ms = [16.0, 39.0, 17.0, 15.5]
    text = " ".join(printed_report(report, 80).split())
    assert "The ranking below may not hold" in text and "load average 5.5 on 2 CPU cores" in text
    assert "Rounds far apart (slowest - fastest over half the median): nnx_tree 142%." in text
    data = report.to_dict()["measurement"]
    assert data["load_average"] == [1.0, 5.5] and [r["reason"] for r in data["unreliable"]] == ["load", "spread"]
    assert LabReport.from_dict(json.loads(json.dumps(report.to_dict()))).unreliable() == data["unreliable"]


class FakeClock:
    """The clock the lab's contexts read, moved only by the fake variants' work."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


def test_variants_take_turns_so_a_burst_of_load_hits_each_and_the_median_leaves_it_out(monkeypatch):
    from types import SimpleNamespace

    from course.lab import context
    from course.lab.rounds import RoundRobin

    clock = FakeClock()
    monkeypatch.setattr(context, "time", clock)
    # Names of real variants, work of fake ones.
    ms_per_step = {"jax_scan": 1.0, "nnx_jit": 2.0, "torch_eager": 4.0}
    turns = RoundRobin(list(ms_per_step))
    order: list[str] = []
    contexts = {}

    def fake_variant(name: str) -> None:
        ctx = context.TrainContext(split=SimpleNamespace(n_train=64), epochs=20, batch_size=32, baton=turns,
                                   on_epoch=lambda epoch, loss: order.append(name))
        contexts[name] = ctx
        ctx.start()
        ctx.mark_ready()
        for epoch in range(ctx.epochs):
            for _ in range(ctx.steps_per_epoch):
                # Something else takes the machine during the third round of turns: 10x slower.
                burst = 10 if 7 <= len(turns.turns) <= 9 else 1
                clock.now += ms_per_step[name] / 1000 * burst
                ctx.steps += 1
                if ctx.timing.compiled is None:
                    ctx.mark_compiled()
            ctx.end_epoch(epoch, 0.5)
        ctx.mark_done()

    turns.run(fake_variant)
    # Round-robin: a fifth of each variant's epochs per turn, the variants in their order.
    assert turns.turns == list(ms_per_step) * 5
    assert order == [name for _ in range(5) for name in ms_per_step for _ in range(4)]
    for name, ms in ms_per_step.items():
        ctx = contexts[name]
        result = api.VariantResult(name, name, 20, None, None, None, None, None, None, [0.5] * 20, "ok")
        api._fill_timing(result, ctx, 20)
        epoch_ms = ms * ctx.steps_per_epoch
        assert len(result.rounds_ms) == 5 and max(result.rounds_ms) == pytest.approx(10 * epoch_ms)  # the burst
        assert result.ms_per_epoch == pytest.approx(epoch_ms)  # ...is not in the median
        # The variant's own clock: waiting for its turns is not its time.
        assert result.total_s == pytest.approx((ms / 1000) * 2 * (16 + 4 * 10))


def test_after_stop_a_waiting_variant_ends_and_one_never_started_is_not_started(monkeypatch):
    from types import SimpleNamespace

    from course.lab import context
    from course.lab.rounds import RoundRobin

    monkeypatch.setattr(context, "time", FakeClock())
    cancel = threading.Event()
    turns = RoundRobin(["a", "b", "c"], cancel)
    ended: dict[str, str] = {}

    def fake_variant(name: str) -> None:
        ctx = context.TrainContext(split=SimpleNamespace(n_train=64), epochs=20, batch_size=32, baton=turns,
                                   cancel=cancel)
        try:
            ctx.start()
            for epoch in range(ctx.epochs):
                ctx.steps += 2
                if name == "b" and epoch == 1:
                    cancel.set()
                ctx.end_epoch(epoch, 0.5)
            ended[name] = "done"
        except context.Cancelled:
            ended[name] = f"stopped after {len(ctx.losses)}"

    turns.run(fake_variant)
    assert ended == {"a": "stopped after 4", "b": "stopped after 2"} and turns.started == ["a", "b"]

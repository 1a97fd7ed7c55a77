"""The training lab screen: a short real run, and Stop."""

from __future__ import annotations

import pytest

from course.lab.numbers import fmt_speedup
from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.lab import LabScreen

from .conftest import wait_until
from .fakes import FakeLabServices

pytestmark = pytest.mark.anyio


async def open_lab(pilot, variants: list[str], epochs: int) -> LabScreen:
    await settle(pilot)
    pilot.app.open_lab()
    await settle(pilot)
    lab = pilot.app.screen
    assert isinstance(lab, LabScreen)
    selection = lab.query_one("#lab-variants")
    selection.deselect_all()
    for v in variants:
        selection.select(v)
    lab.query_one("#lab-epochs").value = str(epochs)
    return lab


async def test_short_real_run_fills_the_table_and_keeps_the_report(workspace):
    app = JaxlingsApp()
    async with app.run_test(size=(120, 40)) as pilot:
        lab = await open_lab(pilot, ["torch_eager", "nnx_jit"], 2)
        assert "JAX on" in str(lab.query_one("#lab-hardware").render())
        # A warm machine can finish two epochs before the next frame, so Run's
        # state is read from inside the run itself.
        seen: dict[str, object] = {}
        real_run_lab = app.services.run_lab

        def spying_run_lab(*args, **kwargs):
            seen["run_allowed"] = lab.check_action("run", ())
            seen["stop_allowed"] = lab.check_action("stop", ())
            return real_run_lab(*args, **kwargs)

        app.services.run_lab = spying_run_lab
        await pilot.press("r")
        await settle(pilot)
        assert seen == {"run_allowed": False, "stop_allowed": True}  # Run hidden, Stop shown while it runs
        assert not lab.running
        report = app.lab_reports[-1]
        assert [r.status for r in report.results] == ["ok", "ok"], [r.error for r in report.results]
        assert lab.query_one("#lab-table").row_count == 2
        assert all(len(r.losses) == 2 for r in report.results)

        await pilot.press("ctrl+s")
        await settle(pilot)
        saved = list((workspace / ".jaxlings" / "lab").glob("results-*.json"))
        assert len(saved) == 1 and '"results"' in saved[0].read_text()


async def test_stop_cancels_the_run_and_keeps_what_finished(workspace):
    services = FakeLabServices(epoch_delay=0.02)
    app = JaxlingsApp(services)
    async with app.run_test(size=(120, 40)) as pilot:
        lab = await open_lab(pilot, ["torch_eager", "nnx_jit"], 100_000)
        await pilot.press("r")
        await wait_until(pilot, lambda: len(lab._losses.get("torch_eager", [])) >= 3)
        await pilot.press("x")
        await settle(pilot)
        assert not lab.running and lab.check_action("run", ()) is True
        report = app.lab_reports[-1]
        assert report.cancelled
        assert [r.status for r in report.results] == ["cancelled", "cancelled"]
        assert services.stopped_at is not None and services.stopped_at < 100_000
        assert "Stopped" in str(lab.query_one("#lab-headline").render())


async def test_leaving_the_lab_keeps_its_results(workspace):
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(120, 40)) as pilot:
        lab = await open_lab(pilot, ["nnx_eager", "nnx_jit"], 50)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        app.open_lab()
        await settle(pilot)
        assert app.screen is lab
        assert "faster" in str(lab.query_one("#lab-headline").render())


async def test_a_second_run_replaces_the_first(workspace):
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(120, 40)) as pilot:
        lab = await open_lab(pilot, ["torch_eager", "nnx_jit"], 30)
        await pilot.press("r")
        await settle(pilot)
        lab.query_one("#lab-variants").deselect("torch_eager")
        await pilot.click("#lab-run")
        await settle(pilot)
        assert len(app.lab_reports) == 2
        assert [r.variant for r in app.lab_reports[-1].results] == ["nnx_jit"]
        assert [row.id for row in lab.query(".variant-row")] == ["row-nnx_jit"]
        assert lab.query_one("#lab-table").row_count == 1


# --- reading the results at 80 columns, starting runs, saving -----------------------

async def run_fake(pilot, variants: list[str], epochs: int, eager: int = 20) -> LabScreen:
    lab = await open_lab(pilot, variants, epochs)
    lab.query_one("#lab-eager-epochs").value = str(eager)
    await pilot.press("r")
    await settle(pilot)
    return lab


def cells(lab: LabScreen, variant: str) -> dict[str, str]:
    from course.tui.screens.lab import COLUMNS

    table = lab.query_one("#lab-table")
    return {name: str(cell) for (name, _), cell in zip(COLUMNS, table.get_row(variant))}


async def test_results_are_readable_at_80_columns(workspace):
    from course.lab.api import VARIANTS

    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await run_fake(pilot, list(VARIANTS), 40)
        table = lab.query_one("#lab-table")
        # Every column is on screen: nothing to scroll sideways to, no cell cut short.
        assert table.virtual_size.width <= table.size.width
        shown = "\n".join(table.render_line(y).text for y in range(table.size.height))
        assert "…" not in shown
        for variant in VARIANTS:
            assert variant in shown and cells(lab, variant)["×PyTorch"] in shown
        assert "0.025×" in shown  # NNX eager against PyTorch: two significant digits, not 0.0×


async def test_one_speedup_in_the_headline_and_the_table_and_one_extrapolation_mark(workspace):
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(120, 40)) as pilot:
        lab = await run_fake(pilot, ["torch_eager", "nnx_eager", "nnx_jit"], 40)
        report = app.lab_reports[-1]
        jit, eager = cells(lab, "nnx_jit"), cells(lab, "nnx_eager")
        assert jit["×NNX eager"] == fmt_speedup(report.speedup("nnx_jit", "nnx_eager")) == "31.2×"
        headline = str(lab.query_one("#lab-headline").render())
        assert f"{jit['×NNX eager']} faster" in headline
        assert eager["Compile"] == cells(lab, "torch_eager")["Compile"] == "" and jit["Compile"] == "0.80 s"
        assert eager["Full run"].endswith("*") and not jit["Full run"].endswith("*")
        legend = str(lab.query_one("#lab-legend").render())
        assert "* extrapolated from 20 epochs to 40" in legend and "steady-state ms per epoch" in legend
        assert "≈" not in headline + legend


async def test_r_works_as_soon_as_the_lab_opens(workspace):
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_lab()
        await pilot.press("r")  # before the variants are even listed
        await settle(pilot)
        assert app.lab_reports, "r on entering the lab started nothing"
        assert [r.status for r in app.lab_reports[-1].results] == ["ok"] * 7


async def test_enter_in_a_field_starts_the_run(workspace):
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await open_lab(pilot, ["nnx_eager", "nnx_jit"], 300)
        lab.query_one("#lab-eager-epochs").focus()
        await pilot.press("enter")
        await settle(pilot)
        assert [r.epochs for r in app.lab_reports[-1].results] == [20, 300]


async def test_a_bad_setting_is_explained_beside_its_field_and_nothing_runs(workspace):
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await open_lab(pilot, ["nnx_eager", "nnx_jit"], 30)
        for raw in ("0", "-3", ""):
            lab.query_one("#lab-eager-epochs").value = raw
            await pilot.pause()
            await pilot.press("r")
            await settle(pilot)
            note = lab.query_one("#lab-eager-note")
            assert note.has_class("-error") and "whole number" in str(note.render()) or "from 1 to" in str(note.render())
            assert app.focused is lab.query_one("#lab-eager-epochs")
            assert not app.lab_reports
        lab.query_one("#lab-epochs").value = "0"
        await pilot.pause()
        assert lab.query_one("#lab-epochs-note").has_class("-error")


async def test_more_eager_epochs_than_epochs_is_said_and_runs_the_full_count(workspace):
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await open_lab(pilot, ["nnx_eager"], 30)
        lab.query_one("#lab-eager-epochs").value = "600"
        await pilot.pause()
        note = lab.query_one("#lab-eager-note")
        assert "runs all 30" in str(note.render()) and not note.has_class("-error")
        await pilot.press("r")
        await settle(pilot)
        eager = app.lab_reports[-1].results[0]
        assert eager.epochs == 30 and not eager.extrapolated


async def test_loss_plot_marks_each_variant_and_keeps_its_key_off_the_curves(workspace):
    from course.lab.numbers import PLOT_MARKERS
    from course.tui.widgets.loss_plot import LossPlot

    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await run_fake(pilot, ["torch_eager", "nnx_jit", "jax_scan"], 40)
        plot = lab.query_one(LossPlot)
        # The fake's curves coincide; curves apart show that each has its own character.
        plot.set_curves({v: [0.7 - 0.1 * i - 0.002 * k for k in range(40)]
                         for i, v in enumerate(["torch_eager", "nnx_jit", "jax_scan"])})
        canvas = plot.plt.uncolorize(plot.plt.build())
        key = str(lab.query_one("#lab-plot-key").render())
        for variant in ("torch_eager", "nnx_jit", "jax_scan"):
            assert PLOT_MARKERS[variant] in canvas and variant not in canvas
            assert f"{PLOT_MARKERS[variant]} {variant}" in key


async def test_saved_results_go_under_dot_jaxlings_and_say_where(workspace):
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        await run_fake(pilot, ["nnx_jit"], 5)
        before = {p.name for p in workspace.iterdir()} - {".jaxlings"}
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        saved = sorted((workspace / ".jaxlings" / "lab").glob("results-*.json"))
        assert len(saved) == 2 and all('"results"' in p.read_text() for p in saved)
        assert {p.name for p in workspace.iterdir()} == before | {".jaxlings"}  # nothing loose in the folder
        said = str(app.screen.query_one("#lab-saved").render())
        assert said.startswith("Saved to .jaxlings/lab/results-")
        assert (workspace / said.removeprefix("Saved to ")) in saved


async def test_a_short_run_gives_nnx_eager_every_epoch_until_the_learner_sets_it(workspace):
    from course.lab.api import FULL_EAGER_S, NNX_EAGER_S_PER_EPOCH_CPU

    full = int(FULL_EAGER_S / NNX_EAGER_S_PER_EPOCH_CPU)
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await open_lab(pilot, ["nnx_eager", "nnx_jit"], 50)
        eager = lab.query_one("#lab-eager-epochs")
        assert eager.value == "50"  # seconds of eager NNX: run in full, not extrapolated
        lab.query_one("#lab-epochs").value = str(full + 1)
        assert eager.value == "20"
        await pilot.press("r")
        await settle(pilot)
        assert [(r.epochs, r.extrapolated) for r in app.lab_reports[-1].results] == [(20, True), (full + 1, False)]
        lab.query_one("#lab-epochs").value = "40"
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert [(r.epochs, r.extrapolated) for r in app.lab_reports[-1].results] == [(40, False), (40, False)]
        # A number the learner types is kept whatever Epochs becomes.
        eager.focus()
        await pilot.press("backspace", "backspace", "7")
        lab.query_one("#lab-epochs").value = "30"
        await settle(pilot)
        assert eager.value == "7"


async def test_the_lab_at_80_columns_names_every_variant_in_full_with_its_rung(workspace):
    from course.lab.api import VARIANTS
    from course.lab.variants import REGISTRY
    from course.i18n import _

    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await run_fake(pilot, list(VARIANTS), 40)
        selection = lab.query_one("#lab-variants")
        room = selection.content_region.width - 4  # the checkbox and its padding
        prompts = [str(selection.get_option_at_index(i).prompt) for i in range(selection.option_count)]
        assert prompts == list(VARIANTS) and max(map(len, prompts)) <= room
        key = str(lab.query_one("#lab-ladder").render())
        table = lab.query_one("#lab-table")
        shown = "\n".join(table.render_line(y).text for y in range(table.size.height))
        for variant in VARIANTS:
            # The names in the list and the table are the ladder's, each with its one line.
            assert variant in shown
            line = next(line for line in key.splitlines() if line.split()[:1] == [variant])
            assert _(REGISTRY[variant].rung) in line


# --- a run at 80×24: Stop from anywhere, everything reachable, one run's figures at a time ---

async def stop_and_wait(pilot, lab: LabScreen) -> None:
    lab._cancel.set()  # whatever the test found, the fake's long run must not outlive it
    await wait_until(pilot, lambda: not lab.running)


async def test_x_stops_a_run_started_with_enter_in_the_epochs_field(workspace):
    app = JaxlingsApp(FakeLabServices(epoch_delay=0.02))
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await open_lab(pilot, ["torch_eager", "nnx_jit"], 100_000)
        lab.query_one("#lab-epochs").focus()
        await pilot.press("enter")
        try:
            await wait_until(pilot, lambda: len(lab._losses.get("torch_eager", [])) >= 3)
            shown = {b.binding.key for b in app.screen.active_bindings.values()
                     if b.binding.action == "stop" and b.enabled and b.binding.show}
            assert shown == {"x"}, "the footer does not show x Stop during the run"
            await pilot.press("x")
            await wait_until(pilot, lambda: not lab.running, timeout=10)
        finally:
            await stop_and_wait(pilot, lab)
        assert app.lab_reports[-1].cancelled
        assert lab.query_one("#lab-epochs").value == "100000"  # nothing typed into the field


async def test_ctrl_x_stops_from_a_text_field_and_the_footer_says_so(workspace):
    app = JaxlingsApp(FakeLabServices(epoch_delay=0.02))
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await open_lab(pilot, ["torch_eager", "nnx_jit"], 100_000)
        await pilot.press("r")
        try:
            await wait_until(pilot, lambda: len(lab._losses.get("torch_eager", [])) >= 3)
            lab.query_one("#lab-eager-epochs").focus()
            await pilot.pause()
            shown = {b.binding.key for b in app.screen.active_bindings.values()
                     if b.binding.action.startswith("stop") and b.enabled and b.binding.show}
            assert shown == {"ctrl+x"}
            await pilot.press("x")  # typed into the field: a field owns its printable keys
            await pilot.press("ctrl+x")
            await wait_until(pilot, lambda: not lab.running, timeout=10)
        finally:
            await stop_and_wait(pilot, lab)
        assert app.lab_reports[-1].cancelled


async def test_at_80x24_the_progress_is_on_screen_and_page_down_reaches_the_plot(workspace):
    from course.lab.api import VARIANTS
    from course.tui.widgets.loss_plot import LossPlot

    app = JaxlingsApp(FakeLabServices(epoch_delay=0.02))
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await open_lab(pilot, list(VARIANTS), 100_000)
        await pilot.press("r")
        out = lab.query_one("#lab-out")
        try:
            await wait_until(pilot, lambda: len(lab._losses.get("torch_eager", [])) >= 3)
            await pilot.pause()
            rows = list(lab.query(".variant-row"))
            assert len(rows) == 7
            for row in rows:  # every bar and its figures in sight, without scrolling
                assert out.region.contains_region(row.region), row.id
        finally:
            await stop_and_wait(pilot, lab)
        lab.query_one("#lab-epochs").focus()  # PageDown works wherever the focus is
        for _ in range(12):
            await pilot.press("pagedown")
        await pilot.pause()
        assert out.max_scroll_y > 0 and out.scroll_y == out.max_scroll_y
        plot = lab.query_one(LossPlot)
        assert out.region.intersection(plot.region).height > 0 or plot.region.y < out.region.y
        for _ in range(12):
            await pilot.press("pageup")
        await pilot.pause()
        assert out.scroll_y == 0


async def test_a_second_run_does_not_show_the_first_runs_rows(workspace):
    app = JaxlingsApp(FakeLabServices(epoch_delay=0.02))
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await open_lab(pilot, ["torch_eager", "nnx_jit"], 100_000)
        await pilot.press("r")
        await wait_until(pilot, lambda: len(lab._losses.get("torch_eager", [])) >= 3)
        await pilot.press("x")
        await wait_until(pilot, lambda: not lab.running)
        table = lab.query_one("#lab-table")
        assert table.row_count == 2  # the first run's rows, stopped
        await pilot.press("r")
        try:
            await wait_until(pilot, lambda: lab.running and len(lab._losses.get("torch_eager", [])) >= 3)
            assert table.row_count == 0 or not table.display
        finally:
            await stop_and_wait(pilot, lab)


async def test_rows_give_the_median_and_spread_and_a_busy_machine_is_said(workspace):
    services = FakeLabServices()
    real = services.run_lab

    def busy_run(*args, **kwargs):
        report = real(*args, **kwargs)
        report.load_start, report.load_end = 9.0, 8.5  # the fake's machine has 2 cores
        return report

    services.run_lab = busy_run
    app = JaxlingsApp(services)
    async with app.run_test(size=(80, 24)) as pilot:
        lab = await run_fake(pilot, ["torch_eager", "nnx_jit"], 30)
        state = str(lab.query_one("#row-nnx_jit .variant-state").render())
        assert "27.6 ms/epoch, 5 rounds, spread 6%" in state
        warning = lab.query_one("#lab-warning")
        assert warning.display and "may not hold" in str(warning.render()) and "load average 9.0" in str(
            warning.render())

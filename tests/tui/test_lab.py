"""The training lab screen: a short real run, and Stop."""

from __future__ import annotations

import pytest

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
        saved = list(workspace.glob("lab-results-*.json"))
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

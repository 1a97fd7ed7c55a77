"""The Japanese edition's screens at 80×24 and 150×45: double-width text must not be
cut or pushed out of line in the footer, the tables, the side-by-side panels or the lab.

The same fixed course, fakes and still frames as test_snapshots.py; the lesson comes
from the fixture course's lessons/ja/. Review changes with the HTML report before
`--snapshot-update`.
"""

from __future__ import annotations

import pytest

from course import i18n
from course.tui.app import JaxlingsApp
from course.tui.pilot import settle

from .conftest import no_blink
from .fakes import FakeLabServices, FakeOutcome, FakeResult

FAILED = FakeResult(
    "scale", False, "wrong_result", "",
    [FakeOutcome("test_scale_matches_reference", "failed", "wrong_result",
                 "scale(x of shape (3, 3), 1.412): expected 2.412 at [0, 0], got 1.412")],
)
SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((150, 45), id="150x45")]


@pytest.fixture(autouse=True)
def japanese():
    # tests/conftest.py puts English back after each test.
    i18n.set_language("ja")


def app() -> JaxlingsApp:
    jaxlings = JaxlingsApp(FakeLabServices(check_result=FAILED))
    jaxlings.animation_level = "none"
    return jaxlings


@pytest.mark.parametrize("size", SIZES)
def test_course_map_ja(workspace, snap_compare, size):
    async def ready(pilot):
        await settle(pilot)

    assert snap_compare(app(), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES)
def test_exercise_with_a_failed_check_ja(workspace, snap_compare, size):
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_exercise("scale")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        no_blink(pilot.app)

    assert snap_compare(app(), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES)
def test_lesson_ja(workspace, snap_compare, size):
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_lesson("arrays")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES)
def test_help_ja(workspace, snap_compare, size):
    async def ready(pilot):
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES)
def test_training_lab_results_ja(workspace, snap_compare, size):
    async def ready(pilot):
        await settle(pilot)
        pilot.app.open_lab()
        await settle(pilot)
        lab = pilot.app.screen
        lab.query_one("#lab-epochs").value = "40"
        no_blink(pilot.app)
        await pilot.press("r")
        await settle(pilot)
        lab.query_one("#lab-out").scroll_to_widget(lab.query_one("#lab-table"), top=True, animate=False)
        await settle(pilot)

    assert snap_compare(app(), terminal_size=size, run_before=ready)


def test_language_setting_ja(workspace, snap_compare):
    async def ready(pilot):
        await settle(pilot)
        await pilot.press("f2")
        await settle(pilot)

    assert snap_compare(app(), terminal_size=(80, 24), run_before=ready)

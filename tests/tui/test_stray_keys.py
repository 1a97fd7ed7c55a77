"""Keys typed by someone who thinks the editor has the focus: none of them resets,
discards or saves, dropped edits are kept, and a reset can be undone."""

from __future__ import annotations

import json

import pytest

from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.confirm import ConfirmScreen
from course.tui.screens.exercise import ExerciseScreen
from course.tui.screens.map import MapScreen
from course.tui.screens.unsaved import UnsavedScreen

from .conftest import COURSE, choose, wait_until
from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

PASSED = FakeResult("scale", True, None, "", [FakeOutcome("test_scale", "passed")])
STARTER = (COURSE / "exercises/01_arrays/scale.py").read_text()
MINE = STARTER + "\n# my work\n"


def scale_file(workspace):
    return workspace / "exercises/01_arrays/scale.py"


async def open_scale(pilot) -> ExerciseScreen:
    await settle(pilot)
    pilot.app.open_exercise("scale")
    await settle(pilot)
    assert isinstance(pilot.app.screen, ExerciseScreen)
    return pilot.app.screen


async def test_typing_retry_yes_after_esc_does_not_reset(workspace):
    scale_file(workspace).write_text(MINE)
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("ctrl+s")  # a pass on record
        await settle(pilot)
        await pilot.press(*"retry", "y", "e", "s", "enter", "tab", "enter")
        await settle(pilot)
        assert isinstance(app.screen, (ExerciseScreen, ConfirmScreen))
        assert screen.editor.text == MINE and app.progress.is_done("scale")
    assert scale_file(workspace).read_text() == MINE
    assert json.loads((workspace / "progress.json").read_text())["exercises"]["scale"]["done"]


async def test_esc_esc_then_def_keeps_the_unsaved_edits(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("enter", *"x = 1")
        assert screen.dirty()
        edited = screen.editor.text
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        assert app.focused.id == "unsaved-cancel"
        await pilot.press(*"def f", "tab", "enter", "d", "right", "enter")
        await settle(pilot)
        assert isinstance(app.screen, UnsavedScreen)  # still asking: nothing typed was an answer
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and screen.editor.text == edited
    assert scale_file(workspace).read_text() == STARTER
    recovered = workspace / ".jaxlings/recovery"
    copies = {p.name: p.read_text() for p in recovered.iterdir()} if recovered.exists() else {}
    # Nothing was discarded: no dated copy, at most the running copy of the unsaved buffer.
    assert copies in ({}, {"scale.unsaved.py": edited})


async def test_a_discard_chosen_on_purpose_keeps_a_recovery_copy(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test(notifications=True) as pilot:
        screen = await open_scale(pilot)
        screen.editor.load_text(MINE)
        await pilot.press("escape")
        await pilot.pause()
        await choose(pilot, "unsaved-discard")
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)
        [copy] = (workspace / ".jaxlings/recovery").iterdir()
        assert copy.read_text() == MINE and copy.name.startswith("scale-")
        assert any(str(copy) in n.message for n in app._notifications)
    assert scale_file(workspace).read_text() == STARTER


async def test_a_discard_whose_copy_cannot_be_written_drops_nothing(workspace):
    (workspace / ".jaxlings").mkdir()
    (workspace / ".jaxlings/recovery").write_text("a file where the folder should be")
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        screen.editor.load_text(MINE)
        await pilot.press("escape")
        await pilot.pause()
        await choose(pilot, "unsaved-discard")
        await settle(pilot)
        assert app.screen is screen and screen.editor.text == MINE and screen.dirty()


async def test_a_reset_keeps_the_pass_shows_its_backup_and_u_undoes_it(workspace):
    scale_file(workspace).write_text(MINE)
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert screen.passed and not screen.query_one("#exercise-backup").display
        screen.editor.load_text(MINE + "# not saved\n")

        await pilot.press("r")
        await pilot.pause()
        await choose(pilot, "confirm-yes")
        await settle(pilot)
        await wait_until(pilot, lambda: not screen.passed)
        assert scale_file(workspace).read_text() == STARTER
        [backup] = (workspace / ".jaxlings/backups").iterdir()
        assert backup.read_text() == MINE
        [recovered] = (workspace / ".jaxlings/recovery").iterdir()
        assert recovered.read_text() == MINE + "# not saved\n"
        line = str(screen.query_one("#exercise-backup").render())
        assert screen.query_one("#exercise-backup").display and backup.name in line and "u" in line
        assert app.progress.passed_before("scale")

        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen) and app.focused.id == "confirm-no"
        await choose(pilot, "confirm-yes")
        await settle(pilot)
        await wait_until(pilot, lambda: screen.passed)
        assert scale_file(workspace).read_text() == MINE and screen.editor.text == MINE
        assert app.progress.is_done("scale")
    saved = json.loads((workspace / "progress.json").read_text())["exercises"]["scale"]
    assert saved["done"] and saved["first_pass"] and "history" not in saved


async def test_the_backup_is_shown_when_the_exercise_is_opened_again(workspace):
    backups = workspace / ".jaxlings/backups"
    backups.mkdir(parents=True)
    (backups / "scale-20260101-120000.py").write_text(MINE)
    (backups / "scale_grad-20270101-120000.py").write_text("another exercise's backup")
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        assert screen.backup == backups / "scale-20260101-120000.py"
        assert "scale-20260101-120000.py" in str(screen.query_one("#exercise-backup").render())

"""The flows a learner takes through lessons and exercises, driven with Pilot."""

from __future__ import annotations

import json

import pytest

from course.tui.app import JaxlingsApp
from course.tui.screens.confirm import ConfirmScreen
from course.tui.screens.exercise import ExerciseScreen
from course.tui.pilot import settle
from course.tui.screens.lesson import LessonScreen

from .conftest import COURSE, choose, wait_until
from .fakes import FakeLabServices, FakeOutcome, FakeResult

FAILED = FakeResult("scale", False, "wrong_result", "", [FakeOutcome("test_scale_matches_reference", "failed", "wrong_result", "expected 2.0, got 1.0")])
pytestmark = pytest.mark.anyio

PASSED = FakeResult("scale", True, None, "", [FakeOutcome("test_scale_matches_reference", "passed")])

STARTER = (COURSE / "exercises/01_arrays/scale.py").read_text()
WRONG = STARTER.replace('raise NotImplementedError("TODO: write scale")', "return x * alpha")
RIGHT = STARTER.replace('raise NotImplementedError("TODO: write scale")', "return jnp.asarray(x) * alpha + 1")


async def open_scale(pilot) -> ExerciseScreen:
    await settle(pilot)
    pilot.app.open_exercise("scale")
    await settle(pilot)
    assert isinstance(pilot.app.screen, ExerciseScreen)
    return pilot.app.screen


def results_text(screen) -> str:
    return str(screen.query_one("#results").render())


async def test_lesson_to_exercise_fail_fix_pass_then_next(workspace):
    """Real checks in a child process: the whole loop a learner goes through."""
    app = JaxlingsApp()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        # A new learner starts on the first lesson's text, not on its exercise.
        assert app.screen.query_one("Tree").cursor_node.data.name == "arrays"
        assert "Enter to read it" in str(app.screen.query_one("#map-next").render())
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen)
        await pilot.press("e")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ExerciseScreen) and screen.exercise.name == "scale"
        editor = screen.query_one("#editor")
        assert editor.text == STARTER

        editor.load_text(WRONG)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert (workspace / "exercises/01_arrays/scale.py").read_text() == WRONG
        assert not screen.passed
        assert "✗" in results_text(screen)

        editor.load_text(RIGHT)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert screen.passed, results_text(screen)
        assert "✓ Passed" in results_text(screen)
        progress = json.loads((workspace / "progress.json").read_text())
        assert progress["exercises"]["scale"]["done"] is True
        assert progress["exercises"]["scale"]["attempts"] == 2
        # A pass never moves on by itself.
        assert app.screen is screen

        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, ExerciseScreen) and app.screen.exercise.name == "clip"
        await pilot.press("escape")  # back to the map, not through the lesson it came from
        await settle(pilot)
        assert len(app.screen_stack) == 1
        assert app.screen.query_one("#map-count").render().plain.startswith("1 of 3")


async def test_next_waits_for_a_pass(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is screen


async def test_reset_asks_first_and_restores_the_starter(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    target = workspace / "exercises/01_arrays/scale.py"
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        screen.query_one("#editor").load_text(WRONG)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert target.read_text() == WRONG

        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and target.read_text() == WRONG

        await pilot.press("r")
        await pilot.pause()
        await choose(pilot, "confirm-yes")
        await settle(pilot)
        assert target.read_text() == STARTER
        assert screen.query_one("#editor").text == STARTER


async def test_hints_are_revealed_one_at_a_time_and_remembered(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        hints = str(screen.query_one("#hints").render())
        assert "Hint 1" not in hints and "2 more hints" in hints

        await pilot.press("h")
        await settle(pilot)
        hints = str(screen.query_one("#hints").render())
        assert "Arithmetic on a jax.Array" in hints and "x * alpha + 1" not in hints
        await pilot.press("h")
        await settle(pilot)
        await pilot.press("h")  # no third hint: nothing changes
        await settle(pilot)
        hints = str(screen.query_one("#hints").render())
        assert "x * alpha + 1" in hints and "last hint" in hints
    saved = json.loads((workspace / "progress.json").read_text())
    assert saved["exercises"]["scale"]["hints_seen"] == 2


async def test_solution_is_shown_only_after_a_pass(workspace):
    services = FakeLabServices(check_result=FAILED)
    app = JaxlingsApp(services)
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        solution = screen.query_one("#solution")
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert not solution.display and screen.solution_text is None

        services.check_result = PASSED
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert solution.display
        assert screen.solution_text == (COURSE / "solutions/01_arrays/scale.py").read_text()


async def test_a_save_from_another_editor_is_loaded_and_checked(workspace):
    services = FakeLabServices(check_result=FAILED)
    app = JaxlingsApp(services)
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.pause(0.3)  # let the watcher take its first look
        (workspace / "exercises/01_arrays/scale.py").write_text(RIGHT)
        await wait_until(pilot, lambda: screen.query_one("#editor").text == RIGHT)
        await settle(pilot)
        assert "✗" in results_text(screen)


async def test_run_is_hidden_while_a_check_runs(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        screen.checking = True
        assert screen.check_action("check", ()) is False
        assert screen.check_action("save_check", ()) is False
        screen.checking = False
        assert screen.check_action("check", ()) is True


async def test_command_palette_jumps_to_an_exercise(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"square_grad")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ExerciseScreen) and app.screen.exercise.name == "square_grad"


async def test_a_failing_worker_becomes_a_message_not_a_traceback(workspace):
    class Broken(FakeLabServices):
        def load_lesson(self, path):
            raise FileNotFoundError(2, "No such file", str(path))

    app = JaxlingsApp(Broken())
    async with app.run_test(notifications=True) as pilot:
        await settle(pilot)
        app.open_lesson("arrays")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("A file the course needs is missing" in m for m in messages), messages
        assert app.is_running


async def test_broken_manifest_is_explained_on_the_map(workspace, tmp_path, monkeypatch):
    course = tmp_path / "bad-course"
    (course / "lessons").mkdir(parents=True)
    (course / "lessons/course.toml").write_text("this is = not [valid toml")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(course))
    app = JaxlingsApp()
    async with app.run_test() as pilot:
        await settle(pilot)
        text = app.screen.query_one("#map-count").render().plain
        assert text.startswith("✗ The course could not be loaded")

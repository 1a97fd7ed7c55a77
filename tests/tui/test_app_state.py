"""State that agrees everywhere: progress written by another jaxlings shows up,
the app reopens where the learner left off, a long check shows its clock, and a
terminal too small for the layout says so."""

from __future__ import annotations

import threading

import pytest

from course.progress import Progress
from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen
from course.tui.screens.lesson import LessonScreen
from course.tui.screens.map import MapScreen
from course.tui.screens.too_small import TooSmallScreen

from .conftest import wait_until
from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

FAILED = FakeResult("scale", False, "wrong_result", "", [FakeOutcome("test_scale", "failed", "wrong_result", "no")])
PASSED = FakeResult("scale", True, None, "", [FakeOutcome("test_scale", "passed")])


def map_count(app) -> str:
    return app.screen_stack[0].query_one("#map-count").render().plain


async def test_a_pass_recorded_elsewhere_shows_up_on_the_map_and_the_exercise(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        app.open_exercise("scale")
        await settle(pilot)
        screen = app.screen
        assert not screen.passed
        # What `jaxlings watch` in another terminal does after a pass.
        Progress.load(workspace / "progress.json").record(PASSED)
        await wait_until(pilot, lambda: screen.passed)
        assert "✓ passed" in str(screen.query_one("#exercise-status").render())
        await pilot.press("escape")
        await settle(pilot)
        assert map_count(app).startswith("1 of 3")


async def test_the_app_reopens_the_exercise_the_learner_left(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        app.open_exercise("clip")
        await settle(pilot)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ExerciseScreen) and app.screen.exercise.name == "clip"
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)


async def test_the_app_reopens_a_lesson(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        app.open_lesson("grads")
        await settle(pilot)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson.name == "grads"


@pytest.mark.parametrize("content", [b"{not json", b"\xff\xfe", b'["a list"]', b'{"screen": "exercise", "name": "gone"}'])
async def test_a_broken_or_stale_bookmark_starts_on_the_map(workspace, content):
    state = workspace / ".jaxlings/app-state.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_bytes(content)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)
        assert map_count(app).startswith("0 of 3")


class SlowCheck(FakeLabServices):
    def __init__(self) -> None:
        super().__init__(check_result=FAILED)
        self.release = threading.Event()

    def run_check(self, exercise, on_outcome=None):
        self.release.wait(60)
        return super().run_check(exercise, on_outcome)


async def test_a_running_check_shows_its_time_against_the_limit(workspace):
    services = SlowCheck()
    app = JaxlingsApp(services)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.open_exercise("scale")
        await settle(pilot)
        screen = app.screen
        await pilot.press("ctrl+r")
        try:
            await wait_until(pilot, lambda: screen.checking)
            status = str(screen.query_one("#exercise-status").render())
            assert "checking" in status and "of 30 s allowed" in status, status
        finally:
            services.release.set()
        await settle(pilot)
        assert not screen.checking
        assert "allowed" not in str(screen.query_one("#exercise-status").render())


async def test_a_terminal_too_small_gets_a_notice_until_it_grows(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test(size=(60, 15)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, TooSmallScreen)
        assert "60×15" in str(app.screen.query_one("#too-small-text").render())
        await pilot.press("n")  # keys do nothing blind behind the notice
        await settle(pilot)
        assert isinstance(app.screen, TooSmallScreen) and len(app.screen_stack) == 2
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)


async def test_no_color_is_respected(workspace, monkeypatch):
    from textual.filter import Monochrome, NoColor

    monkeypatch.setenv("NO_COLOR", "1")
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.no_color
        assert any(isinstance(f, (Monochrome, NoColor)) for f in app._filters)
        # Without colour, each exercise's state still reads from its mark.
        labels = [str(n.label) for lesson in app.screen.query_one("Tree").root.children for n in lesson.children]
        assert labels and all(label[0] in "✓○→" for label in labels), labels


class CountingSlowCheck(SlowCheck):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def run_check(self, exercise, on_outcome=None):
        self.release.wait(60)
        self.seen.append(exercise.exercise_path().read_text())
        return self.check_result


async def test_a_save_during_a_running_check_is_checked_too(workspace):
    services = CountingSlowCheck()
    target = workspace / "exercises/01_arrays/scale.py"
    app = JaxlingsApp(services)
    async with app.run_test() as pilot:
        await settle(pilot)
        app.open_exercise("scale")
        await settle(pilot)
        screen = app.screen
        await pilot.press("ctrl+r")
        try:
            await wait_until(pilot, lambda: screen.checking)
            newer = target.read_text() + "\n# saved in another editor during the check\n"
            target.write_text(newer)
            await wait_until(pilot, lambda: screen.editor.text == newer)
        finally:
            services.release.set()
        await settle(pilot)
        assert services.seen[-1] == newer
        assert not screen.checking


async def test_each_tests_outcome_shows_while_the_rest_still_runs(workspace):
    """The results pane shows each test as it lands, the first failure with its message, and says
    the rest is still running, before the verdict comes."""
    two = FakeResult("scale", False, "wrong_result", "", [
        FakeOutcome("test_scale_matches", "failed", "wrong_result", "scale(x, 2) returned 3.0, expected 5.0"),
        FakeOutcome("test_scale_under_jit", "passed")])
    services = FakeLabServices(check_result=two)
    services.hold_verdict = threading.Event()
    app = JaxlingsApp(services)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_exercise("scale")
        await settle(pilot)
        screen = app.screen
        await pilot.press("ctrl+r")
        try:
            await wait_until(pilot, lambda: services.landed.is_set() and len(screen._landed) == 2)
            await pilot.pause()
            shown = str(screen.query_one("#results").render())
            assert screen.checking
            assert "test_scale_matches" in shown and "expected 5.0" in shown and "test_scale_under_jit" in shown
            assert "still running" in shown
        finally:
            services.hold_verdict.set()
        await wait_until(pilot, lambda: not screen.checking)
        assert "still running" not in str(screen.query_one("#results").render())

"""`n` after a pass follows the course's order: a lesson not opened yet, then its exercise;
past the end it starts again from the top. `l` goes from an exercise to its lesson. At 80×24."""

from __future__ import annotations

import json

import pytest

from course.catalog import load_catalog
from course.progress import Progress
from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen
from course.tui.screens.lesson import LessonScreen

from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

QUIET = FakeResult("clip", False, "wrong_result", "", [FakeOutcome("t", "failed", "wrong_result", "no")])


def done(workspace, *names: str, read: tuple[str, ...] = ()) -> None:
    entry = {"done": True, "attempts": 1, "last_cause": None, "first_pass": None, "hints_seen": 0}
    data = {"format_version": 1, "exercises": {n: dict(entry) for n in names},
            "lessons": {n: {"read": True} for n in read}}
    (workspace / "progress.json").write_text(json.dumps(data))


async def press_next_on(pilot, exercise: str):
    await settle(pilot)
    pilot.app.open_exercise(exercise)
    await settle(pilot)
    assert isinstance(pilot.app.screen, ExerciseScreen) and pilot.app.screen.passed
    await pilot.press("n")
    await settle(pilot)
    return pilot.app.screen


async def test_after_the_last_exercise_of_a_lesson_n_opens_the_next_lesson_not_yet_read(workspace):
    # The learner jumped ahead to clip (scale is not done) and passed it.
    done(workspace, "clip", read=("arrays",))
    app = JaxlingsApp(FakeLabServices(check_result=QUIET))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await press_next_on(pilot, "clip")
        assert isinstance(screen, LessonScreen) and screen.lesson.name == "grads"
    assert Progress.load(workspace / "progress.json").lessons["grads"]["read"] is True


async def test_after_a_lesson_was_read_n_opens_its_exercise_not_the_first_undone_one(workspace):
    done(workspace, "clip", read=("arrays", "grads"))
    app = JaxlingsApp(FakeLabServices(check_result=QUIET))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await press_next_on(pilot, "clip")
        assert isinstance(screen, ExerciseScreen) and screen.exercise.name == "square_grad"


async def test_past_the_end_n_starts_again_from_the_first_exercise_not_done(workspace):
    done(workspace, "clip", "square_grad", read=("arrays", "grads"))
    app = JaxlingsApp(FakeLabServices(check_result=QUIET))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await press_next_on(pilot, "square_grad")
        assert isinstance(screen, ExerciseScreen) and screen.exercise.name == "scale"


async def test_l_opens_the_exercises_lesson(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=QUIET))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_exercise("square_grad")
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen) and app.screen.lesson.name == "grads"


def test_next_step_counts_a_tried_exercise_as_a_started_lesson(workspace):
    catalog = load_catalog()
    progress = Progress.load(workspace / "progress.json")
    assert progress.next_step(catalog)[1].name == "arrays"  # a new learner reads first
    progress.record(QUIET)  # clip tried, in a progress file from before lessons were recorded
    kind, item = progress.next_step(catalog)
    assert (kind, item.name) == ("exercise", "scale")
    assert progress.next_step(catalog, after="scale")[1].name == "clip"

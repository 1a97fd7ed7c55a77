"""What the keyboard reaches: the solution diff, footer keys before a pass, Go to
line, the map's cursor on return, and a lesson's text before its colours."""

from __future__ import annotations

import threading

import pytest
from textual import events
from textual.widgets import Input, Tree

from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen
from course.tui.screens.goto import GotoLineScreen
from course.tui.screens.lesson import LessonScreen
from course.tui.screens.map import MapScreen

from .conftest import COURSE
from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

FAILED = FakeResult("scale", False, "wrong_result", "", [FakeOutcome(
    "test_scale", "failed", "wrong_result", 'File "exercises/01_arrays/scale.py", line 7, in scale',
    file="exercises/01_arrays/scale.py", line=7)], file="exercises/01_arrays/scale.py", line=7)
PASSED = FakeResult("scale", True, None, "", [FakeOutcome("test_scale", "passed")])


async def open_scale(pilot) -> ExerciseScreen:
    await settle(pilot)
    pilot.app.open_exercise("scale")
    await settle(pilot)
    assert isinstance(pilot.app.screen, ExerciseScreen)
    return pilot.app.screen


def test_the_diff_folds_docstrings_so_the_code_differences_come_first():
    from course.tui.widgets.diff import FOLDED, diff_lines

    task = '"""Scale an array.\n\nA long task text,\nline after line,\nof the statement.\n"""\nimport jax\n\n\n' \
           'def scale(x, alpha):\n    """What it does."""\n    return x\n'
    solution = '"""Reference."""\nimport jax\n\n\ndef scale(x, alpha):\n    """Scaled."""\n    return x * alpha + 1\n'
    lines = diff_lines(task, solution)
    assert lines[0] == (" ", FOLDED) and (" ", "    " + FOLDED) in lines
    assert [line for line in lines if line[0] != " "] == [("-", "    return x"), ("+", "    return x * alpha + 1")]
    assert diff_lines("def broken(:\n", "x = 1\n") == [("-", "def broken(:"), ("+", "x = 1")]


async def test_the_solution_pane_takes_the_focus_and_scrolls(workspace):
    long_tail = "".join(f"LINE_{n} = {n}\n" for n in range(80))
    (workspace / "exercises/01_arrays/scale.py").write_text(
        (COURSE / "exercises/01_arrays/scale.py").read_text() + long_tail)
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_scale(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        pane = screen.query_one("#solution")
        assert pane.display and app.focused is pane
        before = pane.scroll_y
        await pilot.press("pagedown")
        await settle(pilot)
        assert pane.scroll_y > before
        await pilot.press("escape")  # closes the diff, stays on the exercise
        await settle(pilot)
        assert app.screen is screen and not pane.display and app.focused is not screen.editor


async def test_solution_and_next_explain_themselves_before_a_pass(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test(notifications=True) as pilot:
        screen = await open_scale(pilot)
        for key, words in (("s", "reference solution opens once"), ("n", "next exercise opens after")):
            app.clear_notifications()
            await pilot.press(key)
            await settle(pilot)
            assert app.screen is screen
            assert any(words in n.message for n in app._notifications), key


async def test_go_to_line_replaces_the_suggestion_and_takes_digits_only(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert screen.failure_line == 7
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert isinstance(app.screen, GotoLineScreen)
        field = app.screen.query_one(Input)
        assert field.value == "7"
        await pilot.press("2", "_", "-", "e", "3")
        assert field.value == "23"
        await pilot.press("backspace", "enter")
        await settle(pilot)
        assert app.screen is screen and screen.editor.cursor_location[0] == 1


async def test_enter_right_after_returning_to_the_map_does_not_open_lesson_one(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        map_screen = app.screen
        tree = map_screen.query_one(Tree)
        assert tree.cursor_node.data.name == "arrays"  # a new learner starts on lesson 1
        await pilot.press("n")  # its exercise
        await settle(pilot)
        await pilot.press("ctrl+s")  # tried once: the map's next item is now the exercise itself
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is map_screen
        # What the map does on return, and an Enter that lands before the next refresh
        # (when the cursor moves), with the cursor still on the line it had before.
        tree.move_cursor_to_line(0)
        map_screen._build_tree()
        map_screen.focus_next_pending()
        assert app.focused is not tree
        tree.action_select_cursor()
        await settle(pilot)
        assert app.screen is map_screen, "Enter opened what the cursor was on before it was placed"
        assert app.focused is tree and tree.cursor_node.data.name == "scale"


async def test_a_lesson_shows_its_text_before_its_colours(workspace, monkeypatch):
    import course.tui.widgets.code as code

    release = threading.Event()
    blocked = []
    original = code.highlight

    def slow_highlight(*args, **kwargs):
        blocked.append(True)
        release.wait(timeout=3)  # bounded, so code that colours on the event loop fails instead of hanging
        blocked.pop()
        return original(*args, **kwargs)

    monkeypatch.setattr(code, "highlight", slow_highlight)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.open_lesson("arrays")
        screen = None
        for _ in range(400):  # a bound, not a timing assertion
            await pilot.pause(0.05)
            screen = app.screen
            if isinstance(screen, LessonScreen) and screen.query(".prose") and blocked:
                break
        assert isinstance(screen, LessonScreen) and screen.query(".prose")
        assert blocked, "the lesson appeared only once its code was coloured"
        panels = list(screen.query("CodePanel"))
        assert panels and not screen.query_one("#lesson-body").loading
        assert panels[0].code.splitlines()[0] in str(panels[0].render())
        release.set()
        await settle(pilot)
        assert all(p.is_highlighted for p in screen.query("CodePanel"))

"""The built-in editor: indentation on Enter, go to line, the failing line, the
solution as a diff."""

from __future__ import annotations

import pytest

from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.goto import GotoLineScreen
from course.tui.widgets.diff import diff_lines
from course.tui.widgets.editor import indent_after

from .conftest import COURSE
from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

STARTER = (COURSE / "exercises/01_arrays/scale.py").read_text()
TRACEBACK = (
    "scale raised ValueError: bad\n"
    '  File "exercises/01_arrays/scale.py", line 9, in scale\n'
    "    raise NotImplementedError"
)
FAILED = FakeResult("scale", False, "exception", "", [FakeOutcome("test_scale", "failed", "exception", TRACEBACK,
                                                                   file="exercises/01_arrays/scale.py", line=9)],
                    file="exercises/01_arrays/scale.py", line=9)
PASSED = FakeResult("scale", True, None, "", [FakeOutcome("test_scale", "passed")])


async def open_scale(pilot):
    await settle(pilot)
    pilot.app.open_exercise("scale")
    await settle(pilot)
    return pilot.app.screen


def test_indent_after():
    assert indent_after("def f(x):") == "    "
    assert indent_after("    if a:  # a comment") == "        "
    assert indent_after("    return x") == "    "
    assert indent_after('    s = "a:"') == "    "
    assert indent_after("x = 1") == ""


async def test_enter_keeps_the_indentation_and_indents_after_a_colon(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        editor = screen.editor
        row = STARTER.splitlines().index("def scale(x, alpha):")
        await pilot.press("e")
        editor.cursor_location = (row, len("def scale(x, alpha):"))
        await pilot.press("enter", *"y = x", "enter", *"return y")
        lines = editor.text.splitlines()
        assert lines[row + 1] == "    y = x"
        assert lines[row + 2] == "    return y"


async def test_go_to_line(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert isinstance(app.screen, GotoLineScreen)
        await pilot.press(*"99", "enter")
        await pilot.pause()
        assert isinstance(app.screen, GotoLineScreen)  # out of range: says so, stays
        assert "lines 1 to" in str(app.screen.query_one("#goto-error").render())
        await pilot.press("backspace", "backspace", "5", "enter")
        await pilot.pause()
        assert app.screen is screen and app.focused is screen.editor
        assert screen.editor.cursor_location[0] == 4
        assert screen.editor.text == STARTER


async def test_the_failing_line_is_a_link_and_g_jumps_to_it(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert screen.failure_line == 9
        content = screen.query_one("#results").render().content  # the Content inside the wrapping visual
        assert any("jump_to_line(9)" in str(span.style) for span in content.spans)
        assert app.focused is not screen.editor
        await pilot.click("#results", offset=(4, 1))  # the link, under the headline
        await pilot.pause()
        assert app.focused is screen.editor and screen.editor.cursor_location[0] == 8
        await pilot.press("escape")
        screen.editor.cursor_location = (0, 0)
        await pilot.press("g")
        await pilot.pause()
        assert app.focused is screen.editor and screen.editor.cursor_location[0] == 8
        await pilot.press("escape", "ctrl+g")
        await pilot.pause()
        assert app.screen.query_one("#goto-line").value == "9"


def test_diff_lines_mark_each_side():
    assert diff_lines("a\nb\n", "a\nc\n") == [(" ", "a"), ("-", "b"), ("+", "c")]


async def test_the_solution_is_a_diff_against_the_learners_code(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert screen.query_one("#solution").display
        shown = screen.query_one("#solution-diff").render().plain
        assert '-     raise NotImplementedError("TODO: write scale")' in shown
        assert "+     return jnp.asarray(x) * alpha + 1" in shown
        assert "  def scale(x, alpha):" in shown


async def test_a_failed_check_after_a_pass_is_not_shown_as_passing(workspace):
    services = FakeLabServices(check_result=PASSED)
    app = JaxlingsApp(services)
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert str(screen.query_one("#exercise-status").render()).endswith("✓ passed")
        services.check_result = FAILED
        await pilot.press("ctrl+r")
        await settle(pilot)
        status = str(screen.query_one("#exercise-status").render())
        assert "✗ the last check failed" in status, status


LONG = ("    return jnp.asarray(x) * alpha + 1  # the reference's comment, long enough to run well past "
        "the right edge of an 80-column terminal")


async def test_the_solution_takes_the_whole_width_at_80_columns_and_compares_code_not_comments(workspace):
    mine = workspace / "exercises/01_arrays/scale.py"
    mine.write_text('"""Scale an array."""\nimport jax.numpy as jnp\n\n\ndef scale(x, alpha):\n'
                    "    # TODO: return x * alpha + 1 as a JAX array\n"
                    '    raise NotImplementedError("TODO: write scale")\n')
    solution = workspace.parent / "solution.py"
    solution.write_text((COURSE / "solutions/01_arrays/scale.py").read_text().replace(
        "    return jnp.asarray(x) * alpha + 1", LONG))

    class Services(FakeLabServices):
        def read_text(self, path):
            return solution.read_text() if path.name == "scale.py" and "solutions" in path.parts else super().read_text(path)

    app = JaxlingsApp(Services(check_result=PASSED))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_scale(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        pane = screen.query_one("#solution")
        assert pane.display and pane.region.width == 80 and pane.region.height >= 16
        assert not screen.query_one("#editor").region.width  # stepped aside while the diff is open
        rows = screen.query_one("#solution-diff").render().plain.splitlines()
        assert not [row for row in rows if row.startswith("-") and row[1:].strip().startswith("#")]
        # The long line is one line of the diff (it scrolls sideways), not wrapped into two.
        assert any(row.startswith("+") and row.endswith("80-column terminal") for row in rows)
        assert pane.max_scroll_x > 0
        await pilot.press("escape")
        await settle(pilot)
        assert not pane.display and screen.query_one("#editor").region.width == 80
        assert screen.focused is not None and screen.focused is not pane

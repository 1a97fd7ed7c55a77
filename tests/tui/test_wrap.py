"""Long lines at 80×24: a code panel's trailing `# →` comment and a results line keep
their place when they wrap (under their indentation, after ↪), never at column 0."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.geometry import Region

from course import i18n
from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen
from course.tui.screens.lesson import LessonScreen
from course.tui.widgets.code import CodePanel
from course.tui.widgets.wrap import MARK

from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]


def rows(widget) -> list[str]:
    strips = widget.render_lines(Region(0, 0, widget.outer_size.width, widget.outer_size.height))
    return ["".join(segment.text for segment in strip).rstrip() for strip in strips]


@pytest.fixture
def real_course(tmp_path, monkeypatch) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(REPO / "exercises", ws / "exercises")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(REPO))
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(ws))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(ws / "progress.json"))
    yield ws
    i18n.set_language(i18n.DEFAULT)


async def test_a_trailing_comment_that_does_not_fit_moves_to_a_marked_row(real_course):
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_lesson("arrays")
        await settle(pilot)
        assert isinstance(app.screen, LessonScreen)
        await pilot.pause()
        panels = [p for p in app.screen.query(CodePanel) if "NumPy's float64 kept" in p.code]
        assert panels, [p.code[:40] for p in app.screen.query(CodePanel)]
        panel = panels[0]
        shown = rows(panel)
        comment = next(row for row in shown if "# → torch.float64" in row)
        assert comment.strip("│ ").startswith(MARK + "# → torch.float64"), shown
        code_row = next(row for row in shown if "print(torch.from_numpy" in row)
        assert "#" not in code_row  # the code's row ends where its comment begins
        assert not [row for row in shown if row.strip("│ ").startswith("kept")]


async def test_a_wrapped_results_line_keeps_its_indentation(workspace):
    message = ("AssertionError: jax.jit(scale)(x, 2.5) with x of shape (3, 5): 4 of 15 values differ; "
               "the largest difference is 1.5 at index (2, 4), where the reference gives 3.25")
    result = FakeResult("scale", False, "wrong_result", "", [FakeOutcome("test_scale", "failed", "wrong_result",
                                                                       message)])
    app = JaxlingsApp(FakeLabServices(check_result=result))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_exercise("scale")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ExerciseScreen)
        await pilot.press("ctrl+r")
        await settle(pilot)
        view = screen.query_one("#results")
        shown = rows(view)
        first = next(i for i, row in enumerate(shown) if "AssertionError: jax.jit(scale)" in row)
        assert shown[first].startswith("    AssertionError")
        assert shown[first + 1].startswith("    " + MARK), shown

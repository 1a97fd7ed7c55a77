"""After a failed check, the link to the failing line and `g` come from the result's fields:
a real check of the same file gives the same line in English and in Japanese."""

from __future__ import annotations

import pytest

from course import i18n
from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen

from .conftest import COURSE

pytestmark = pytest.mark.anyio

# The starter's `raise NotImplementedError("TODO: write scale")`.
RAISING_LINE = next(n for n, line in enumerate((COURSE / "exercises/01_arrays/scale.py").read_text().splitlines(),
                                               start=1) if "raise NotImplementedError" in line)


@pytest.mark.parametrize("lang", ["en", "ja"])
async def test_the_link_to_the_failing_line_is_the_same_in_both_languages(workspace, lang):
    i18n.set_language(lang)
    try:
        app = JaxlingsApp()  # the real check runner, in a child process
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            app.open_exercise("scale")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, ExerciseScreen)
            await pilot.press("ctrl+r")
            await settle(pilot)
            assert screen.last_check_failed
            assert screen.failure_line == RAISING_LINE, screen._results
            content = screen.query_one("#results").render().content
            assert any(f"jump_to_line({RAISING_LINE})" in str(span.style) for span in content.spans)
            assert i18n._("Go to line {line}").format(line=RAISING_LINE) in content.plain
            await pilot.press("g")
            await pilot.pause()
            assert app.focused is screen.editor and screen.editor.cursor_location[0] == RAISING_LINE - 1
    finally:
        i18n.set_language(i18n.DEFAULT)

"""Keys typed faster than the app draws land in the order they were typed: a go-to-line,
then a key that moves in the line, then text, all sent in one burst (as a fast typist, a
paste or a busy machine delivers them), change the file as if they had come one by one."""

from __future__ import annotations

import pytest
from textual import events

from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen

from .conftest import COURSE, wait_until
from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

QUIET = FakeResult("scale", False, "wrong_result", "", [FakeOutcome("t", "failed", "wrong_result", "no")])
STARTER = (COURSE / "exercises/01_arrays/scale.py").read_text()


def burst(app, keys: list) -> None:
    """Hand every key to the app at once, without waiting for any of them to be handled."""
    for key in keys:
        key, char = key if isinstance(key, tuple) else (key, key if len(key) == 1 else None)
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)


def typed(text: str) -> list[tuple[str, str]]:
    names = {" ": "space", "#": "number_sign"}
    return [(names.get(ch, ch), ch) for ch in text]


@pytest.mark.parametrize("round_", range(3))
async def test_goto_line_end_and_text_in_one_burst_land_in_order(workspace, round_):
    app = JaxlingsApp(FakeLabServices(check_result=QUIET))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_exercise("scale")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ExerciseScreen)
        await pilot.press("e")  # into the editor, cursor on line 1
        keys = ["ctrl+g", "5", "enter", "shift+end", *typed("import jax"), "ctrl+g", "9", "enter", "end",
                *typed("  # x")]
        before = app.keys_released()
        burst(app, keys)
        await wait_until(pilot, lambda: app.keys_released() == before + len(keys) and not app.keys_pending())
        await settle(pilot)
        lines = screen.editor.text.splitlines()
        want = STARTER.splitlines()
        want[4] = "import jax"  # Shift+End selected the line, the text replaced it
        want[8] += "  # x"
        assert lines == want, screen.editor.text


async def test_typing_on_past_the_longest_wait_between_autosaves_keeps_the_app_alive(workspace, monkeypatch):
    from course.tui.autosave import EditorAutosave

    # Typing has gone on for as long as a copy may wait: the next copy is due at once.
    monkeypatch.setattr(EditorAutosave, "MAX_WAIT_S", 0.0)
    app = JaxlingsApp(FakeLabServices(check_result=QUIET))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.open_exercise("scale")
        await settle(pilot)
        screen = app.screen
        await pilot.press("e", "x", "y")
        await settle(pilot)
        assert app.is_running and screen.editor.text.startswith("xy")

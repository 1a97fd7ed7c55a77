"""The app's tests run against a small fixture course and a throwaway workspace,
so the repository's exercise files and progress are never touched."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

COURSE = Path(__file__).parent / "course"

# The fixture course's checks are run by the app's check runner, not collected here.
collect_ignore = ["course"]


@pytest.fixture
def anyio_backend() -> str:
    # anyio's pytest plugin (installed with watchfiles) runs the async tests.
    return "asyncio"


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(COURSE / "exercises", ws / "exercises")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(COURSE))
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(ws))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(ws / "progress.json"))
    monkeypatch.setenv("JAXLINGS_SEED", "1234")
    return ws


async def wait_until(pilot, condition, timeout: float = 20.0) -> None:
    """Pump the app until `condition()` holds (a bound, not a timing assertion)."""
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not condition():
        if loop.time() > end:
            raise AssertionError("the app never reached the expected state")
        await pilot.pause(0.05)


def no_blink(app) -> None:
    for widget in app.screen.query("TextArea, Input"):
        widget.cursor_blink = False


async def choose(pilot, button_id: str) -> None:
    """Answer the open dialog as a learner must: wait until the keyboard has been
    quiet long enough, move to the button with arrows, press Enter."""
    from course.tui.screens.deliberate import DeliberateScreen

    screen = pilot.app.screen
    assert isinstance(screen, DeliberateScreen), screen
    await pilot.pause(DeliberateScreen.QUIET_S + 0.2)
    for _ in range(len(screen.query("Button"))):
        if pilot.app.focused is not None and pilot.app.focused.id == button_id:
            break
        await pilot.press("right")
    assert pilot.app.focused is not None and pilot.app.focused.id == button_id
    await pilot.press("enter")

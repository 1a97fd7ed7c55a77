"""The learner's code is never lost or changed behind their back: keys the footer
shows never type into the file, nothing saves unless asked, a file that did not
load is never written, and a failed save is never reported as saved."""

from __future__ import annotations

import errno
import json
import os
import stat

import pytest

from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.confirm import ConfirmScreen
from course.tui.screens.exercise import ExerciseScreen
from course.tui.screens.map import MapScreen
from course.tui.screens.unsaved import UnsavedScreen
from course.tui.services import Services

from .conftest import COURSE, choose, wait_until
from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

FAILED = FakeResult("scale", False, "wrong_result", "", [FakeOutcome("test_scale", "failed", "wrong_result", "no")])
PASSED = FakeResult("scale", True, None, "", [FakeOutcome("test_scale", "passed")])
STARTER = (COURSE / "exercises/01_arrays/scale.py").read_text()
EDITED = STARTER + "\n# my edit\n"


def scale_file(workspace):
    return workspace / "exercises/01_arrays/scale.py"


async def open_from_map(pilot) -> ExerciseScreen:
    """Map → n, as a learner opens the next exercise."""
    await settle(pilot)
    await pilot.press("n")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExerciseScreen) and screen.exercise.name == "scale"
    return screen


def shown_keys(app) -> list[str]:
    """Every key the footer shows right now for an action that is enabled."""
    keys = []
    for key, active in app.active_bindings.items():
        if active.binding.show and active.enabled:
            keys.append(key)
    return keys


async def test_letter_keys_after_opening_an_exercise_do_not_type_into_it(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_from_map(pilot)
        assert app.focused is not screen.editor
        await pilot.press("h")
        await settle(pilot)
        assert screen.editor.text == STARTER
        assert "Hint 1" in str(screen.query_one("#hints").render())
        assert not screen.dirty()
    assert scale_file(workspace).read_text() == STARTER


async def test_no_key_the_footer_shows_types_into_the_editor(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test() as pilot:
        screen = await open_from_map(pilot)
        await pilot.press("ctrl+s")  # a pass: Solution and Next become live too
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert app.focused is screen.editor
        keys = shown_keys(app)
        assert "ctrl+s" in keys and "escape" in keys
        typing = [k for k in keys if len(k) == 1 or k in ("tab", "enter", "space")]
        assert typing == [], f"the footer shows keys that type into the file: {typing}"


async def test_esc_leaves_the_editor_without_typing_then_goes_to_the_map(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_from_map(pilot)
        await pilot.press("e")
        assert app.focused is screen.editor
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and app.focused is not screen.editor
        await pilot.press("z", "tab", "h")
        await settle(pilot)
        assert screen.editor.text == STARTER and not screen.dirty()
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)
    assert scale_file(workspace).read_text() == STARTER


async def test_esc_goes_to_the_map_after_jumps_with_the_command_palette(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        for name in ("scale", "square_grad", "clip"):
            await pilot.press("ctrl+p")
            await pilot.pause()
            await pilot.press(*name)
            await pilot.pause(0.5)
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, ExerciseScreen) and app.screen.exercise.name == name
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MapScreen) and len(app.screen_stack) == 1


@pytest.mark.parametrize("answer, kept", [("unsaved-cancel", "stay"), ("unsaved-discard", "discard"),
                                          ("unsaved-save", "save")])
async def test_leaving_with_unsaved_edits_asks_and_never_saves_by_itself(workspace, answer, kept):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_from_map(pilot)
        screen.editor.load_text(EDITED)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        assert scale_file(workspace).read_text() == STARTER
        await choose(pilot, answer)
        await settle(pilot)
        if kept == "stay":
            assert app.screen is screen and screen.dirty()
            assert scale_file(workspace).read_text() == STARTER
        else:
            assert isinstance(app.screen, MapScreen)
            expected = EDITED if kept == "save" else STARTER
            assert scale_file(workspace).read_text() == expected
        recovered = workspace / ".jaxlings/recovery"
        copies = {p.name: p.read_text() for p in recovered.iterdir()} if recovered.exists() else {}
        if kept == "discard":  # a dated copy, and no running copy of a buffer that is gone
            assert list(copies.values()) == [EDITED] and "scale.unsaved.py" not in copies
        elif kept == "stay":  # still unsaved: at most the running copy of the buffer
            assert copies in ({}, {"scale.unsaved.py": EDITED})
        else:
            assert copies == {}


async def test_next_and_the_palette_ask_about_unsaved_edits_too(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test() as pilot:
        screen = await open_from_map(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        screen.editor.load_text(EDITED)
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        await pilot.press("escape")  # cancel
        await pilot.pause()
        assert app.screen is screen
        app.open_exercise("square_grad")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and screen.editor.text == EDITED
    assert scale_file(workspace).read_text() == STARTER


async def test_quitting_with_unsaved_edits_asks(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_from_map(pilot)
        screen.editor.load_text(EDITED)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen) and app.is_running
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and app.is_running


async def test_a_file_that_is_not_utf8_is_shown_as_an_error_and_never_written(workspace):
    target = scale_file(workspace)
    original = b"# caf\xe9 in latin-1\ndef scale(x, alpha):\n    return x\n"
    target.write_bytes(original)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_from_map(pilot)
        assert screen.load_error is not None and "UTF-8" in screen.load_error
        assert not screen.editor.display
        assert screen.query_one("#load-error").display
        assert "not open for editing" in str(screen.query_one("#load-error").render())
        await pilot.press("e", "x", "ctrl+s")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)
    assert target.read_bytes() == original


async def test_a_missing_file_is_shown_as_an_error_and_not_created(workspace):
    target = scale_file(workspace)
    target.unlink()
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_from_map(pilot)
        assert screen.load_error is not None and "does not exist" in screen.load_error
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert not target.exists()


class DiskFull(FakeLabServices):
    def write_text(self, path, text):
        if path.name == "scale.py":
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        super().write_text(path, text)


async def test_a_failed_save_keeps_the_unsaved_mark_and_leaving_still_asks(workspace):
    app = JaxlingsApp(DiskFull(check_result=FAILED))
    async with app.run_test(notifications=True) as pilot:
        screen = await open_from_map(pilot)
        screen.editor.load_text(EDITED)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert screen.dirty()
        assert "unsaved" in str(screen.query_one("#exercise-status").render())
        assert any("No space left" in n.message for n in app._notifications)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        await pilot.press("ctrl+s")  # save again: it fails again, so we stay
        await settle(pilot)
        assert app.screen is screen and screen.dirty()
    assert scale_file(workspace).read_text() == STARTER


def test_saves_are_atomic_and_keep_the_mode(tmp_path):
    target = tmp_path / "mine.py"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    Services().write_text(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["mine.py"]


def test_a_save_that_fails_leaves_the_file_and_no_temp_behind(tmp_path, monkeypatch):
    target = tmp_path / "mine.py"
    target.write_text("old\n")

    def no_space(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OSError):
        Services().write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["mine.py"]


@pytest.mark.parametrize("editor", ["nosuch-editor", "code --wait", "vim 'unterminated", "edit[/x]"])
async def test_a_missing_editor_is_reported_before_the_terminal_is_handed_over(workspace, monkeypatch, editor):
    monkeypatch.setenv("VISUAL", editor)
    monkeypatch.setenv("PATH", str(workspace))  # no `code`, no `vim` here
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))

    def no_suspend():
        raise AssertionError("the app suspended for an editor that does not exist")

    async with app.run_test(notifications=True) as pilot:
        screen = await open_from_map(pilot)
        monkeypatch.setattr(app, "suspend", no_suspend)
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert app.screen is screen and app.is_running
        assert any("$VISUAL" in n.message for n in app._notifications)
    assert scale_file(workspace).read_text() == STARTER


async def test_reset_marks_the_exercise_pending_and_keeps_a_backup(workspace):
    app = JaxlingsApp(FakeLabServices(check_result=PASSED))
    async with app.run_test(notifications=True) as pilot:
        screen = await open_from_map(pilot)
        screen.editor.load_text(EDITED)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert screen.passed
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await choose(pilot, "confirm-yes")
        await settle(pilot)
        # The watcher may still deliver the pass read just before the reset; the reset's own write follows it.
        await wait_until(pilot, lambda: not screen.passed)
        assert not app.progress.is_done("scale")
        assert screen.editor.text == STARTER
        backups = list((workspace / ".jaxlings/backups").iterdir())
        assert [b.read_text() for b in backups] == [EDITED]
        assert any(str(backups[0]) in n.message for n in app._notifications)
    saved = json.loads((workspace / "progress.json").read_text())
    assert not saved["exercises"]["scale"]["done"]
    assert [h["done"] for h in saved["exercises"]["scale"]["history"]] == [True]  # the pass is not forgotten
    assert scale_file(workspace).read_text() == STARTER


async def test_a_file_that_goes_bad_on_disk_is_not_saved_over(workspace):
    target = scale_file(workspace)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_from_map(pilot)
        broken = b"# caf\xe9\n"
        target.write_bytes(broken)  # another editor saved it as latin-1
        await wait_until(pilot, lambda: screen.load_error is not None)
        assert not screen.editor.display
        await pilot.press("ctrl+s")
        await settle(pilot)
    assert target.read_bytes() == broken


@pytest.mark.parametrize("failure", [OSError(8, "Exec format error"), KeyboardInterrupt(), 3])
async def test_an_editor_that_fails_returns_to_the_app_with_a_message(workspace, monkeypatch, failure):
    import contextlib
    import subprocess

    fake_editor = workspace / "my-editor"
    fake_editor.write_text("#!/bin/sh\nexit 0\n")
    fake_editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(fake_editor))
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))

    def run(argv, check=False):
        if isinstance(failure, BaseException):
            raise failure
        return subprocess.CompletedProcess(argv, failure)

    async with app.run_test(notifications=True) as pilot:
        screen = await open_from_map(pilot)
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
        monkeypatch.setattr(subprocess, "run", run)
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert app.screen is screen and app.is_running
        assert any("my-editor" in n.message for n in app._notifications)
        assert screen.editor.text == STARTER

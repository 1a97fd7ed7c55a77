"""Unsaved edits are copied to .jaxlings/recovery/ as they are typed, and the next
start offers them beside the file, which changes only when the learner says so."""

from __future__ import annotations

import pytest

from course.recovery import Autosave, autosave_path
from course.tui.app import JaxlingsApp
from course.tui.autosave import EditorAutosave
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen
from course.tui.screens.map import MapScreen
from course.tui.screens.recover import RecoverScreen
from course.tui.screens.unsaved import UnsavedScreen

from .conftest import COURSE, choose, wait_until
from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

FAILED = FakeResult("scale", False, "wrong_result", "", [FakeOutcome("test_scale", "failed", "wrong_result", "no")])
STARTER = (COURSE / "exercises/01_arrays/scale.py").read_text()
MINE = STARTER.replace('raise NotImplementedError("TODO: write scale")', "return x * alpha  # mine")


def scale_file(workspace):
    return workspace / "exercises/01_arrays/scale.py"


def recovery(workspace):
    return workspace / ".jaxlings/recovery"


def autosaved(workspace):
    return recovery(workspace) / "scale.unsaved.py"


def dated_copies(workspace) -> list[str]:
    folder = recovery(workspace)
    return sorted(p.read_text() for p in folder.iterdir() if p.name != "scale.unsaved.py") if folder.exists() else []


@pytest.fixture
def quick(monkeypatch):
    # The copy follows the typing closely here; the delay is what a learner gets, not what is tested.
    monkeypatch.setattr(EditorAutosave, "DELAY_S", 0.05)


class Exercises:
    """The fixture course, for the core functions that take an exercise."""

    @staticmethod
    def scale(workspace):
        from course.catalog import load_catalog

        return load_catalog().exercise("scale")


async def open_scale(pilot) -> ExerciseScreen:
    await settle(pilot)
    pilot.app.open_exercise("scale")
    await settle(pilot)
    return pilot.app.screen


async def test_typed_edits_are_copied_as_they_are_typed_and_go_when_saved(workspace, quick):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("e", *"# mine")
        await wait_until(pilot, lambda: autosaved(workspace).exists()
                         and autosaved(workspace).read_text() == screen.editor.text)
        assert "# mine" in screen.editor.text
        assert scale_file(workspace).read_text() == STARTER  # the copy is not the file
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert scale_file(workspace).read_text() == screen.editor.text
        assert not autosaved(workspace).exists()


async def test_typing_on_keeps_the_copy_up_to_date_even_without_a_pause(workspace, monkeypatch):
    monkeypatch.setattr(EditorAutosave, "DELAY_S", 3600.0)
    monkeypatch.setattr(EditorAutosave, "MAX_WAIT_S", 0.2)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("e", "x")
        await wait_until(pilot, lambda: autosaved(workspace).exists())
        await pilot.press("y")
        await wait_until(pilot, lambda: autosaved(workspace).read_text() == screen.editor.text)


async def test_a_discard_keeps_its_dated_copy_and_removes_the_autosaved_one(workspace, quick):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        screen = await open_scale(pilot)
        await pilot.press("e", *"# mine")
        edited = screen.editor.text
        await wait_until(pilot, lambda: autosaved(workspace).exists())
        await pilot.press("escape", "escape")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        await choose(pilot, "unsaved-discard")
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)
    assert not autosaved(workspace).exists()
    assert dated_copies(workspace) == [edited]
    assert scale_file(workspace).read_text() == STARTER


async def test_typing_back_to_the_file_removes_the_copy(workspace, quick):
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await open_scale(pilot)
        await pilot.press("e", "z")
        await wait_until(pilot, lambda: autosaved(workspace).exists())
        await pilot.press("backspace")
        await wait_until(pilot, lambda: not autosaved(workspace).exists())


@pytest.mark.parametrize("answer", ["escape", "recover-later", "recover-disk", "recover-recovered"])
async def test_the_next_start_offers_the_recovered_edits(workspace, answer):
    recovery(workspace).mkdir(parents=True)
    autosaved(workspace).write_text(MINE)
    before = scale_file(workspace).read_bytes()
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test(notifications=True) as pilot:
        await settle(pilot)  # the map opens, sees the copy and opens its exercise
        await wait_until(pilot, lambda: isinstance(app.screen, RecoverScreen))
        dialog = app.screen
        shown = dialog.query_one("#recover-diff").render().plain
        assert '-    raise NotImplementedError("TODO: write scale")' in shown
        assert "+    return x * alpha  # mine" in shown
        assert app.focused.id == "recover-later"
        # Typing meant for the editor answers nothing.
        await pilot.press(*"yes no")
        assert app.screen is dialog
        if answer == "escape":
            await pilot.press("escape")
        else:
            await choose(pilot, answer)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ExerciseScreen) and screen.exercise.name == "scale"
        if answer == "recover-recovered":
            assert screen.editor.text == MINE and screen.dirty()
            assert scale_file(workspace).read_bytes() == before  # in the editor, not saved
            await pilot.press("ctrl+s")
            await settle(pilot)
            assert scale_file(workspace).read_text() == MINE
            assert not recovery(workspace).exists() or not autosaved(workspace).exists()
            assert dated_copies(workspace) == []
            return
        assert screen.editor.text == STARTER and not screen.dirty()
    assert scale_file(workspace).read_bytes() == before
    if answer == "recover-disk":
        assert not autosaved(workspace).exists() and dated_copies(workspace) == [MINE]
    else:
        assert autosaved(workspace).read_text() == MINE and dated_copies(workspace) == []


async def test_after_deciding_later_new_typing_does_not_overwrite_the_recovered_edits(workspace, quick):
    recovery(workspace).mkdir(parents=True)
    autosaved(workspace).write_text(MINE)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, RecoverScreen))
        await pilot.press("escape")
        await settle(pilot)
        screen = app.screen
        await pilot.press("e", *"# new")
        await wait_until(pilot, lambda: autosaved(workspace).read_text() == screen.editor.text)
    assert dated_copies(workspace) == [MINE]
    assert scale_file(workspace).read_text() == STARTER


async def test_a_copy_equal_to_the_file_is_dropped_without_a_word(workspace):
    recovery(workspace).mkdir(parents=True)
    autosaved(workspace).write_text(STARTER)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test() as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MapScreen)
        screen = await open_scale(pilot)
        assert app.screen is screen
    assert not autosaved(workspace).exists()


def test_an_older_buffer_never_overwrites_a_newer_one(workspace):
    copy = Autosave(Exercises.scale(workspace))
    path = copy.path
    copy.store(2, "two")
    copy.store(1, "one")  # a slow write of an older buffer, finishing late
    assert path.read_text() == "two"
    copy.clear(3)  # saved
    assert not path.exists()
    copy.store(2, "two again")  # a write started before the save
    assert not path.exists()
    copy.store(4, "four")
    assert path.read_text() == "four"


def test_a_copy_left_by_another_run_is_moved_aside_not_overwritten(workspace):
    exercise = Exercises.scale(workspace)
    path = autosave_path(exercise)
    path.parent.mkdir(parents=True)
    path.write_text("earlier")
    copy = Autosave(exercise)
    copy.clear(1)
    assert path.read_text() == "earlier"  # not this editor's to remove
    displaced = copy.store(2, "mine now")
    assert displaced is not None and displaced.read_text() == "earlier"
    assert path.read_text() == "mine now"


async def test_a_crash_writes_the_edits_not_yet_copied_before_the_app_ends(workspace, monkeypatch):
    monkeypatch.setattr(EditorAutosave, "DELAY_S", 3600.0)
    monkeypatch.setattr(EditorAutosave, "MAX_WAIT_S", 3600.0)

    def broken(self):
        raise RuntimeError("a bug in the app")

    monkeypatch.setattr(ExerciseScreen, "action_hint", broken)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    with pytest.raises(RuntimeError, match="a bug in the app"):
        async with app.run_test() as pilot:
            screen = await open_scale(pilot)
            await pilot.press("e", *"# mine")
            edited = screen.editor.text
            assert not autosaved(workspace).exists()  # the timer has not written it
            await pilot.press("escape", "h")
            await pilot.pause()
    assert autosaved(workspace).read_text() == edited
    assert scale_file(workspace).read_text() == STARTER


async def test_the_start_opens_the_newest_recovered_exercise_and_names_the_others(workspace):
    import os

    recovery(workspace).mkdir(parents=True)
    clip = recovery(workspace) / "clip.unsaved.py"
    clip.write_text("# my clip\n")
    os.utime(clip, (1_000_000_000, 1_000_000_000))
    autosaved(workspace).write_text(MINE)
    app = JaxlingsApp(FakeLabServices(check_result=FAILED))
    async with app.run_test(notifications=True) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, RecoverScreen))
        assert app.screen.file.endswith("scale.py")
        assert any("clip" in n.message for n in app._notifications)

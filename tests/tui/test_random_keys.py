"""Random typing never loses work.

Seeded sequences of keys (runs of letters a learner types after a stray Esc,
Esc, Tab, Enter, arrows, the footer's keys, Ctrl keys that open dialogs) drive
the app across the map, lessons, exercises, the lab, help and the dialogs.
After every key, the test looks at the workspace and asserts:

- a learner's file changed only through Ctrl+S on an exercise, or through a
  button the learner moved to on purpose (Tab/arrows) and pressed with Enter:
  Save writes the buffer, Reset the starter, Restore a backup;
- unsaved edits that leave the editor are on disk or in a recovery file;
- no pass, attempt or hint of the progress file is forgotten, and an exercise
  stops being done only through a confirmed Reset;
- the app is still running.

Checks do not run here: the services answer every check with a failure for
the exercise that was checked (recorded in the progress file like a real one),
so a Ctrl+S costs milliseconds instead of a child process. What is asserted
(files, recovery copies, the progress file) is written by the app's real code.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest
from textual.widgets import Button

from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen
from course.tui.screens.unsaved import UnsavedScreen

from .conftest import COURSE
from .fakes import FakeLabServices, FakeOutcome, FakeResult

pytestmark = pytest.mark.anyio

SEED = int(os.environ.get("JAXLINGS_RANDOM_KEYS_SEED", "2024"))
SEQUENCES = int(os.environ.get("JAXLINGS_RANDOM_KEYS_SEQUENCES", "4"))
KEYS_PER_SEQUENCE = int(os.environ.get("JAXLINGS_RANDOM_KEYS", "400"))
# Wall time per sequence: the keys stop here even if some are left, so a slow CI
# machine runs fewer of them instead of timing out (JAXLINGS_RANDOM_KEYS_SECONDS=0: all).
SECONDS = float(os.environ.get("JAXLINGS_RANDOM_KEYS_SECONDS", "25"))
AT_LEAST = 60  # keys every sequence must get through, however slow the machine

# What a learner types when they think the editor has the focus.
WORDS = ["jnp.array", "try", "retry", "yes", "def f(x):", "dry", "x", "return x", "s", "d", "n", "r", "y", "u",
         "import jax", "c", "l", "e", "h", "t", "g", "w", "123"]
SPECIAL = ["escape", "escape", "tab", "shift+tab", "enter", "enter", "left", "right", "up", "down", "pagedown",
           "backspace", "space", "ctrl+s", "ctrl+g", "ctrl+r", "ctrl+o", "f1", "f2", "ctrl+p", "ctrl+z"]
# Keys that go into the editor's buffer when it has the focus.
EDITING = {"backspace", "space", "enter", "tab", "delete", "ctrl+z"}
CONFIRMING = {"confirm-yes", "unsaved-save"}


def key_name(char: str) -> str:
    names = {" ": "space", ".": "full_stop", "(": "left_parenthesis", ")": "right_parenthesis", ":": "colon"}
    return names.get(char, char)


def moves(rng: random.Random, count: int) -> list[str]:
    keys: list[str] = []
    while len(keys) < count:
        roll = rng.random()
        if roll < 0.1:  # a vim habit: Esc Esc, then type on
            keys.extend(["escape", "escape", *(key_name(c) for c in rng.choice(WORDS))])
        elif roll < 0.5:
            keys.extend(key_name(c) for c in rng.choice(WORDS))
        else:
            keys.append(rng.choice(SPECIAL))
    return keys[:count]


class FailingChecks(FakeLabServices):
    """Real files, progress, reset and lab screen; every check fails at once (see the module docstring)."""

    def run_check(self, exercise, on_outcome=None):
        return FakeResult(exercise.name, False, "wrong_result", "",
                          [FakeOutcome(f"test_{exercise.name}", "failed", "wrong_result", "not yet")])

    def warm_up_checks(self, exercise=None) -> None:
        pass


def learner_files(workspace: Path) -> dict[str, bytes]:
    return {str(p.relative_to(workspace)): p.read_bytes() for p in sorted((workspace / "exercises").rglob("*.py"))}


def kept_copies(workspace: Path) -> list[bytes]:
    """Every copy the app keeps of a learner's code: backups and recovered edits."""
    state = workspace / ".jaxlings"
    return [p.read_bytes() for p in state.rglob("*.py")] if state.is_dir() else []


def starters() -> dict[str, bytes]:
    return {str(p.relative_to(COURSE)): p.read_bytes() for p in (COURSE / "exercises").rglob("*.py")}


def progress_of(workspace: Path) -> dict:
    path = workspace / "progress.json"
    return json.loads(path.read_text())["exercises"] if path.exists() else {}


def seed_progress(workspace: Path) -> None:
    (workspace / "progress.json").write_text(json.dumps({"format_version": 1, "exercises": {
        "scale": {"done": True, "attempts": 3, "last_cause": None, "first_pass": "2026-05-01T10:12:03+00:00",
                  "hints_seen": 1},
        "clip": {"done": False, "attempts": 2, "last_cause": "wrong_result", "first_pass": None, "hints_seen": 0},
    }}))
    scale = workspace / "exercises/01_arrays/scale.py"
    scale.write_text(scale.read_text() + "\n# my own work, passed\n")


def dirty_buffers(app) -> dict[str, tuple[ExerciseScreen, str]]:
    return {s.exercise.file: (s, s.editor.text) for s in app.screen_stack
            if isinstance(s, ExerciseScreen) and s.dirty()}


def assert_progress_kept(before: dict, after: dict, reset_confirmed: bool, key: str) -> None:
    for name, old in before.items():
        new = after.get(name)
        assert new is not None, f"the progress record of {name} was erased by {key!r}"
        if old.get("first_pass"):
            assert new.get("first_pass") == old["first_pass"], f"the pass of {name} was forgotten after {key!r}"
        assert int(new.get("attempts", 0)) >= int(old.get("attempts", 0)), f"attempts of {name} went down"
        assert int(new.get("hints_seen", 0)) >= int(old.get("hints_seen", 0)), f"hints of {name} went down"
        if old.get("done") and not new.get("done"):
            assert reset_confirmed, f"{name} stopped being done after {key!r}, without a confirmed reset"


async def drive(workspace: Path, keys: list[str]) -> int:
    """Press `keys` one at a time, checking the rules after each. Returns how many were
    pressed (all of them, or as many as SECONDS allowed)."""
    starter = starters()
    app = JaxlingsApp(FailingChecks())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        end = time.monotonic() + SECONDS
        for number, key in enumerate(keys):
            if SECONDS and number >= AT_LEAST and time.monotonic() > end:
                return number
            screen, focused = app.screen, app.focused
            files = learner_files(workspace)
            buffers = dirty_buffers(app)
            progress = progress_of(workspace)
            editor_text = screen.editor.text if isinstance(screen, ExerciseScreen) else None
            confirming = isinstance(focused, Button) and focused.id in CONFIRMING
            typing = isinstance(screen, ExerciseScreen) and focused is screen.editor and (
                key in EDITING or key not in SPECIAL)

            await pilot.press(key)
            await settle(pilot)
            where = f"key {number} ({key!r}) on {type(screen).__name__}, focus {getattr(focused, 'id', focused)}"
            assert app.is_running, f"the app stopped at {where}"

            kept = kept_copies(workspace)
            for file, data in learner_files(workspace).items():
                if files.get(file) == data:
                    continue
                if key == "ctrl+s" and isinstance(screen, ExerciseScreen):
                    assert data == editor_text.encode(), f"Ctrl+S wrote something else than the buffer: {where}"
                    continue
                if key == "ctrl+s" and isinstance(screen, UnsavedScreen):  # "Save" in the question, by its key
                    assert file.removeprefix("exercises/") in buffers, f"Ctrl+S saved a file with no edits: {where}"
                    assert data == buffers[file.removeprefix("exercises/")][1].encode(), where
                    continue
                assert key == "enter" and confirming, f"{file} changed without Ctrl+S or a confirmed button: {where}"
                assert data in (starter.get(file), *kept) or any(
                    data == text.encode() for _s, text in buffers.values()), f"{file} got unexpected text: {where}"

            still_open = {s.exercise.file: s for s in app.screen_stack if isinstance(s, ExerciseScreen)}
            on_disk = learner_files(workspace)
            for file, (old_screen, text) in buffers.items():
                if still_open.get(file) is old_screen and (old_screen.editor.text == text or typing):
                    continue
                assert text.encode() == on_disk.get(f"exercises/{file}") or text.encode() in kept, (
                    f"unsaved edits of {file} were dropped without a copy: {where}")

            assert_progress_kept(progress, progress_of(workspace), key == "enter" and confirming, where)
        return len(keys)


@pytest.mark.parametrize("sequence", range(SEQUENCES))
async def test_random_keys_never_lose_work(workspace, monkeypatch, sequence):
    from course.tui.screens.deliberate import DeliberateScreen

    monkeypatch.setenv("VISUAL", "no-such-editor-here")  # Ctrl+O explains, never suspends
    if sequence % 2:
        # Every other run without the quiet time, so that Tab/arrows + Enter do answer the
        # dialogs: the rule must hold by the keys alone, and confirmed answers get exercised.
        monkeypatch.setattr(DeliberateScreen, "QUIET_S", 0.0)
    seed_progress(workspace)
    keys = moves(random.Random(SEED * 1000 + sequence), KEYS_PER_SEQUENCE)
    pressed = await drive(workspace, keys)
    print(f"sequence {sequence}: {pressed} keys")
    assert pressed >= AT_LEAST

"""The README's key table and the app's bindings say the same thing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.binding import Binding

from course.tui.app import JaxlingsApp
from course.tui.screens.exercise import ExerciseScreen
from course.tui.screens.lesson import LessonScreen
from course.tui.screens.map import MapScreen

README = Path(__file__).resolve().parents[2] / "README.md"
NAMES = {"escape": "Esc", "enter": "Enter", "question_mark": "?"}


def key_name(key: str) -> str:
    if key in NAMES:
        return NAMES[key]
    if key.startswith("ctrl+"):
        return "Ctrl+" + key[5:].upper()
    if re.fullmatch(r"f\d+", key):
        return key.upper()
    return key


def table_rows() -> dict[str, set[str]]:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Studying"):]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        match = re.match(r"\| ([^|]+?) \| (.+) \|$", line)
        if match and match.group(1) not in ("where", "---"):
            keys = {k for k in re.findall(r"`([^`]+)`", match.group(2)) if not k.startswith("$")}
            rows[match.group(1)] = keys
    return rows


def binding_keys(cls) -> set[str]:
    app_keys = {k for b in JaxlingsApp.BINDINGS for k in b.key.split(",")}
    keys = set()
    for b in cls.BINDINGS:
        if not isinstance(b, Binding) or b.system:
            continue
        own = b.key.split(",")
        if cls is not JaxlingsApp and b.action.startswith("app.") and set(own) <= app_keys:
            continue  # a screen's copy of an app-wide key: listed under "everywhere"
        keys.update(key_name(k.strip()) for k in own)
    return keys


@pytest.mark.parametrize(
    "rows, cls, extra",
    [
        (["everywhere"], JaxlingsApp, {"Ctrl+P"}),  # the command palette is Textual's own binding
        (["course map"], MapScreen, {"Enter"}),  # Enter opens the tree's node
        (["lesson"], LessonScreen, set()),
        (["exercise", "exercise, outside the editor"], ExerciseScreen, set()),
    ],
)
def test_the_readme_lists_exactly_the_keys_each_screen_binds(rows, cls, extra):
    table = table_rows()
    documented = set().union(*(table[r] for r in rows))
    assert documented == binding_keys(cls) | extra

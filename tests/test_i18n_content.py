"""The course's own words (titles, hints, task statements) reach the learner in the
language in use: the CLI's `hint` and `list`, and the hints of `watch`."""

from __future__ import annotations

import io
import queue
import re
from pathlib import Path

import pytest
from rich.console import Console

from course import i18n
from course.catalog import load_catalog
from course.cli import main
from course.engine.runner import CheckOutcome, ExerciseResult
from course.watching import WatchLoop

REPO = Path(__file__).resolve().parents[1]
EXERCISE = "immutable_updates"  # its hints hold `x.at[index]`: text that looks like markup


def flat(text: str) -> str:
    """Without whitespace: Rich wraps Japanese between any two characters."""
    return re.sub(r"\s+", "", text)


@pytest.fixture
def course(tmp_path, monkeypatch):
    """The real course, a private progress file, no language asked for by the environment."""
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(REPO))
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(tmp_path / "ws"))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(tmp_path / "progress.json"))
    monkeypatch.setenv("COLUMNS", "100")
    for var in ("JAXLINGS_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    yield load_catalog(REPO)
    i18n.set_language(i18n.DEFAULT)


def japanese(message: str) -> str:
    try:
        i18n.set_language("ja")
        translated = i18n.content(message)
    finally:
        i18n.set_language(i18n.DEFAULT)
    assert translated != message and re.search(r"[\u3040-\u30ff]", translated), message
    return translated


def test_hint_prints_the_japanese_hint_with_lang_ja_and_english_otherwise(course, capsys):
    first, second = course.exercise(EXERCISE).hints[:2]
    assert main(["--lang", "ja", "hint", EXERCISE]) == 0
    out = flat(capsys.readouterr().out)
    assert flat(japanese(first)) in out
    assert flat(first) not in out

    assert main(["hint", EXERCISE]) == 0  # nothing asks for Japanese: English
    out = flat(capsys.readouterr().out)
    assert flat(first) in out and flat(second) in out
    assert flat(japanese(first)) not in out

    assert main(["--lang", "ja", "hint", EXERCISE]) == 0
    out = flat(capsys.readouterr().out)
    assert flat(japanese(first)) in out and flat(japanese(second)) in out
    assert "x.at[index].add(src)" in japanese(course.exercise(EXERCISE).hints[2])


def test_jaxlings_lang_env_gives_japanese_hints_too(course, capsys, monkeypatch):
    monkeypatch.setenv("JAXLINGS_LANG", "ja")
    assert main(["hint", EXERCISE]) == 0
    assert flat(japanese(course.exercise(EXERCISE).hints[0])) in flat(capsys.readouterr().out)


def test_list_shows_the_course_title_in_the_language_in_use(course, capsys):
    assert main(["--lang", "ja", "list"]) == 0
    assert flat(japanese(course.title)) in flat(capsys.readouterr().out)
    assert main(["--lang", "en", "list"]) == 0
    out = flat(capsys.readouterr().out)
    assert flat(course.title) in out and flat(japanese(course.title)) not in out


class Script(queue.Queue):
    """The keys the learner presses while the loop is idle; running out fails instead of hanging."""

    def __init__(self, idle_events):
        super().__init__()
        self.idle_events = list(idle_events)

    def get(self, block=True, timeout=None):
        if not self.empty() or not block:
            return super().get(block=False)
        if not self.idle_events:
            raise AssertionError("the loop waited for another event; the script has none left")
        return self.idle_events.pop(0)


@pytest.mark.parametrize("lang", ["ja", "en"])
def test_watch_hint_key_shows_the_hint_in_the_language_in_use(course, tmp_path, lang):
    exercise = course.exercise(EXERCISE)

    def check(ex):
        outcome = CheckOutcome("test_it", "failed", "wrong_result", "Wrong result", 0.01)
        return ExerciseResult(ex.name, False, "wrong_result", "Wrong result", [outcome], 0.1, 5)

    out = io.StringIO()
    loop = WatchLoop(course, exercise, check=check, console=Console(file=out, width=100),
                     events=Script([("key", "h"), ("key", "q")]), keys=True, watch=lambda path, q: None,
                     progress_path=tmp_path / "progress.json")
    i18n.set_language(lang)
    assert loop.run() == 0
    shown = flat(out.getvalue())
    hint = exercise.hints[0]
    if lang == "ja":
        assert flat(japanese(hint)) in shown and flat(hint) not in shown
    else:
        assert flat(hint) in shown and flat(japanese(hint)) not in shown

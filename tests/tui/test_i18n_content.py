"""The app shows the course's own words in the language in use: the task statement,
the hints, the lesson titles. These run on the real course, whose words the catalog holds."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

from course import i18n
from course.tui.app import JaxlingsApp
from course.tui.pilot import settle
from course.tui.screens.exercise import ExerciseScreen, unwrap_cjk
from course.tui.statement import statement_markdown

from .fakes import FakeLabServices

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
EXERCISE = "immutable_updates"
FILE = "02_arrays/immutable_updates.py"
STARTER = (REPO / "exercises" / FILE).read_text(encoding="utf-8")
STATEMENT = ast.get_docstring(ast.parse(STARTER))


@pytest.fixture
def real_course(tmp_path, monkeypatch) -> Path:
    ws = tmp_path / "workspace"
    shutil.copytree(REPO / "exercises", ws / "exercises")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(REPO))
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(ws))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(ws / "progress.json"))
    yield ws
    i18n.set_language(i18n.DEFAULT)


def in_japanese(message: str) -> str:
    i18n.set_language("ja")
    translated = i18n.content(message)
    assert translated != message and re.search(r"[\u3040-\u30ff]", translated)
    return translated


async def open_exercise(pilot) -> ExerciseScreen:
    await settle(pilot)
    pilot.app.open_exercise(EXERCISE)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ExerciseScreen) and screen.query_one("#editor").text
    return screen


def task(screen) -> str:
    return screen.query_one("#task").source


async def test_exercise_screen_shows_the_task_hints_and_lesson_title_in_japanese(real_course):
    statement = in_japanese(STATEMENT)
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_exercise(pilot)
        # Opened for the first time in Japanese: the file is now the Japanese starter, whose
        # docstring is the catalog's statement (its code examples with Japanese comments).
        japanese = ast.get_docstring(ast.parse((REPO / "starters" / "ja" / FILE).read_text(encoding="utf-8")))
        assert task(screen) == statement_markdown(unwrap_cjk(japanese))
        assert statement.split("\n\n")[0] == japanese.split("\n\n")[0]
        # The catalog's lines break mid-sentence; on screen the sentence has no gap.
        assert "配列を\n" in statement and "「新しい」配列を返して入力には" in task(screen)
        exercise = app.catalog.exercise(EXERCISE)
        lesson_title = in_japanese(app.catalog.lesson_of(EXERCISE).title)
        assert lesson_title in screen.sub_title
        for _ in exercise.hints:
            await pilot.press("h")
        await settle(pilot)
        shown = str(screen.query_one("#hints").render())
        for hint in exercise.hints:
            assert in_japanese(hint) in shown
        # Code in a hint is text, not markup: `x.at[index]` keeps its brackets.
        assert "x.at[index].add(src)" in shown


async def test_an_edited_docstring_still_shows_the_translation_of_the_original(real_course):
    mine = real_course / "exercises" / FILE
    mine.write_text(STARTER.replace("Rewrite an in-place PyTorch routine", "My notes: rewrite a routine", 1),
                    encoding="utf-8")
    statement = in_japanese(STATEMENT)
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_exercise(pilot)
        assert task(screen) == statement_markdown(unwrap_cjk(statement))


async def test_in_english_the_task_is_the_learners_own_docstring(real_course):
    mine = real_course / "exercises" / FILE
    edited = STARTER.replace("Rewrite an in-place PyTorch routine", "My notes: rewrite a routine", 1)
    mine.write_text(edited, encoding="utf-8")
    i18n.set_language(i18n.DEFAULT)
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_exercise(pilot)
        assert task(screen) == statement_markdown(ast.get_docstring(ast.parse(edited)))
        assert app.catalog.lesson_of(EXERCISE).title in screen.sub_title


async def test_the_map_and_the_lesson_header_show_lesson_titles_in_japanese(real_course):
    i18n.set_language("ja")
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        labels = [str(node.label) for node in app.screen.query_one("Tree").root.children]
        for lesson, label in zip(app.catalog.lessons, labels, strict=True):
            assert i18n.content(lesson.title) in label and i18n.content(lesson.title) != lesson.title
        lesson = app.catalog.lesson_of(EXERCISE)
        app.open_lesson(lesson.name)
        await settle(pilot)
        assert app.screen.sub_title == i18n.content(lesson.title)


def test_unwrap_cjk_joins_japanese_lines_of_a_paragraph_only():
    text = ("配列を\n返して、\n`x` を使います。\nEnglish stays\nwrapped と\n日本語\n\n"
            "    code:\n        説明の\n        続き\n\n- 項目の\n  続き。\n- 次の項目\n")
    assert unwrap_cjk(text) == ("配列を返して、`x` を使います。English stays\nwrapped と日本語\n\n"
                                "    code:\n        説明の\n        続き\n\n- 項目の続き。\n- 次の項目\n")
    english = "A line\nand the next\n\n    code\n"
    assert unwrap_cjk(english) == english


async def test_opening_an_exercise_in_japanese_the_first_time_gives_the_japanese_starter(real_course):
    mine = real_course / "exercises" / FILE
    japanese = (REPO / "starters" / "ja" / FILE).read_text(encoding="utf-8")
    i18n.set_language("ja")
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_exercise(pilot)
        assert mine.read_text(encoding="utf-8") == japanese
        assert screen.query_one("#editor").text == japanese
        assert task(screen) == statement_markdown(unwrap_cjk(ast.get_docstring(ast.parse(japanese))))
    # Switched to English: the file stays as it is, and the task pane reads the English statement.
    i18n.set_language(i18n.DEFAULT)
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await open_exercise(pilot)
        assert mine.read_text(encoding="utf-8") == japanese
        assert task(screen) == statement_markdown(STATEMENT)


async def test_opening_an_exercise_in_english_leaves_the_english_starter(real_course):
    mine = real_course / "exercises" / FILE
    i18n.set_language(i18n.DEFAULT)
    app = JaxlingsApp(FakeLabServices())
    async with app.run_test(size=(100, 30)) as pilot:
        await open_exercise(pilot)
    assert mine.read_text(encoding="utf-8") == STARTER

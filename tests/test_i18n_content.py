"""The course's own words (titles, hints, task statements) in Japanese: they reach the
learner in the language in use (the CLI's `hint` and `list`, the hints of `watch`), and
their translations keep the code, the examples and the layout of the English."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from course import i18n
from course.catalog import load_catalog
from course.cli import main
from course.engine.results import CheckOutcome, ExerciseResult
from course.shell.watching import WatchLoop
from test_watch import Script

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


def _catalog():
    from babel.messages.pofile import read_po

    with i18n.po_path("ja", i18n.CONTENT).open("rb") as f:
        return [m for m in read_po(f, locale="ja", domain=i18n.CONTENT) if m.id and m.string]


def _code_tokens(text: str) -> list[str]:
    """The words of a hint that are code (`jnp.where(mask,`, `x.at[index].add(src)`), without
    the punctuation of the sentence around them."""
    tokens = []
    for word in text.split():
        while True:
            trimmed = word.rstrip(",.:;")
            if trimmed.endswith(")") and trimmed.count(")") > trimmed.count("("):
                trimmed = trimmed[:-1]
            if trimmed.startswith("(") and trimmed.count("(") > trimmed.count(")"):
                trimmed = trimmed[1:]
            if re.fullmatch(r"\([^()]*\)", trimmed):  # a word in parentheses
                trimmed = trimmed[1:-1]
            if trimmed == word:
                break
            word = trimmed
        if re.search(r"[()\[\]_=.]", word) and re.search(r"[a-z]", word):
            tokens.append(word)
    return tokens


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _examples(statement: str) -> list[str]:
    """The lines of the code examples: the block indented (by 4 or more) under a line that
    ends with a colon ("This PyTorch code updates a tensor in place:")."""
    examples, intro = [], None
    for line in statement.splitlines():
        if intro is not None and line.strip() and _indent(line) >= intro + 4:
            examples.append(line)
            continue
        if line.strip():
            intro = _indent(line) if line.rstrip().endswith(":") else None
    return examples


def test_examples_are_the_blocks_under_a_colon():
    text = ("PyTorch:\n    a = 1\n\n    def f(x):\n        return x\nprose\n    not code\n"
            "   - for `x`:\n     (prose)\n   PyTorch equivalent:\n       b = 2\n")
    assert _examples(text) == ["    a = 1", "    def f(x):", "        return x", "       b = 2"]


def test_translated_statements_keep_their_code_and_layout():
    """What the learner types stays as in English: indented examples line for line, every
    `inline code`, and the right-hand `PyTorch: ...` column where the English has it."""
    statements = [m for m in _catalog() if "\n" in m.id]
    assert len(statements) == len(list((REPO / "exercises").rglob("*.py")))
    for m in statements:
        where = m.locations[0][0]
        lines = m.string.splitlines()
        for line in _examples(m.id):
            assert line in lines, f"{where}: code line changed: {line!r}"
        for line in m.id.splitlines():
            column = re.match(r"^(.*\S)?\s{2,}(PyTorch[^`]*: `.*`)$", line)
            if column:
                assert any(j.endswith(column.group(2)) for j in lines), f"{where}: {column.group(2)!r}"
        spans = set(re.findall(r"`[^`]+`", m.id)) - set(re.findall(r"`[^`]+`", m.string))
        assert not spans, f"{where}: inline code missing from the translation: {spans}"


def test_translated_hints_and_titles_keep_their_code():
    for m in _catalog():
        if "\n" in m.id:
            continue
        missing = [t for t in _code_tokens(m.id) if t not in m.string]
        assert not missing, f"{m.auto_comments}: {missing}"
        assert "`" not in m.id or re.findall(r"`[^`]+`", m.id) == re.findall(r"`[^`]+`", m.string)


def test_code_tokens_are_the_code_of_a_sentence():
    assert _code_tokens("Use jnp.where(mask, value, x). For the scatter (the .at[] property), "
                        "(broadcasts) or (see nnx.vmap).") == ["jnp.where(mask", ".at[]", "nnx.vmap"]


def test_lesson_titles_read_as_the_headings_of_the_japanese_lessons(course):
    """The map and the lesson's header say what the lesson's own first heading says."""
    compared = 0
    for lesson in course.lessons:
        english = (REPO / "lessons" / lesson.file).read_text(encoding="utf-8").splitlines()[0]
        japanese_file = REPO / "lessons" / "ja" / lesson.file
        if english != f"# {lesson.title}" or not japanese_file.is_file():
            continue
        heading = japanese_file.read_text(encoding="utf-8").splitlines()[0]
        assert f"# {japanese(lesson.title)}" == heading, lesson.name
        compared += 1
    assert compared, "no lesson has a Japanese edition whose heading is its title"

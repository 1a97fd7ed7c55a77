"""The shell's layout at 80 columns, in Japanese and in English.

- `jaxlings lesson` shows every character of a table: a cell wraps, and a word longer than
  its column is folded, never cut with "…" (Rich's default, which dropped 「を」 after a
  full line of double-width text, and the end of long calls in backticks).
- No line of the lesson, the check report or the help breaks the rules of Japanese line
  breaking (kinsoku): none starts with closing punctuation, a closing bracket, a small kana
  or 々, and none holds punctuation alone.
- Snapshots of `lesson`, a failing `check` and `--help` in Japanese, as plain text. After a
  deliberate change, rewrite them with JAXLINGS_UPDATE_SNAPSHOTS=1 and read the diff.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from rich.cells import cell_len

from course.cli import COMMANDS, main

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
FIXTURE = TESTS / "fixtures" / "course"
SNAPSHOTS = TESTS / "shell_snapshots"
WIDTH = 80
LESSONS = sorted(p.name for p in (REPO / "lessons").glob("[0-9][0-9]_*.md"))

# What may not start a line (JIS X 4051's closing brackets, punctuation, small kana, 々 and the
# long-vowel mark), written out here rather than taken from course.i18n.linebreak.
NO_START = set("、。，．・：；？！）」』】〕〉》］｝〙〗ゝゞヽヾ々〻ーァィゥェォッャュョヮヵヶぁぃぅぇぉっゃゅょゎ…‥)]},;:!?")
PUNCTUATION = NO_START | set("「『（【〔〈《［｛〘〖([{")
PANEL = ("╭", "│", "╰")


def layout_problems(text: str, code_panels: bool = False) -> list[str]:
    """Lines wider than WIDTH, and lines (or, in a table, cell lines) that break kinsoku.

    `code_panels`: boxed panels hold code (a lesson), whose lines are left as written;
    otherwise a panel's lines are read like any other (a check report)."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        if cell_len(line) > WIDTH:
            problems.append(f"line {number} is {cell_len(line)} cells wide: {line!r}")
        if code_panels and line.lstrip().startswith(PANEL):
            continue
        # A table's cells are apart by two spaces or more; prose has single spaces.
        for piece in re.split(r" {2,}", line.strip().strip("│").strip()):
            piece = piece.strip(" •▌")
            if not piece:
                continue
            if piece[0] in NO_START:
                problems.append(f"line {number} starts with {piece[0]!r}: {line.rstrip()!r}")
            elif all(ch in PUNCTUATION for ch in piece):
                problems.append(f"line {number} is punctuation alone: {line.rstrip()!r}")
    return problems


def source_tables(markdown: str) -> list[str]:
    """The text of each table's cells, in order, as the reader should see it (no backticks)."""
    tables, cells = [], None
    for token in MarkdownIt().enable("strikethrough").enable("table").parse(markdown):
        if token.type == "table_open":
            cells = []
        elif token.type == "table_close":
            tables.append("".join(cells))
            cells = None
        elif cells is not None and token.type == "inline":
            cells.append("".join(child.content for child in token.children or ()
                                 if child.type in ("text", "code_inline")))
    return tables


def shown_tables(text: str) -> list[str]:
    """The lines of each table as shown: its heading, the rule under it, its rows, up to a
    blank line (Rich's markdown tables have no side borders, only that rule)."""
    lines = text.splitlines()
    tables = []
    for i, line in enumerate(lines):
        if line.strip() and set(line.strip()) == {"─"} and i > 0 and lines[i - 1].strip():
            start = i - 1
            while start > 0 and lines[start - 1].strip():
                start -= 1
            end = i + 1
            while end < len(lines) and lines[end].strip():
                end += 1
            tables.append("\n".join(lines[start:i] + lines[i + 1:end]))
    return tables


def _letters(text: str) -> Counter:
    return Counter(ch for ch in text if not ch.isspace())


def lesson_problems(markdown: str, shown: str) -> list[str]:
    problems = layout_problems(shown, code_panels=True)
    if shown.count("…") != markdown.count("…"):
        problems.append(f"{shown.count('…')} '…' shown, the lesson has {markdown.count('…')}: something was cut")
    expected, tables = source_tables(markdown), shown_tables(shown)
    if len(tables) != len(expected):
        problems.append(f"{len(tables)} tables shown, the lesson has {len(expected)}")
    for k, (want, got) in enumerate(zip(expected, tables, strict=False), 1):
        missing, extra = _letters(want) - _letters(got), _letters(got) - _letters(want)
        if missing or extra:
            problems.append(f"table {k}: characters missing {dict(missing)}, added {dict(extra)}:\n{got}")
    return problems


def _render(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    try:
        code = main(list(argv))
    except SystemExit as e:  # --help
        code = e.code
    return code, capsys.readouterr().out


@pytest.fixture
def at_80(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.delenv("JAXLINGS_COURSE_ROOT", raising=False)


@pytest.fixture
def fixture_course(tmp_path, monkeypatch):
    """The fixture course with a Japanese edition of its first lesson, made to meet each
    hazard at 80 columns: a ')' and a '々' at the start of a line, a URL followed by '。',
    a table cell whose line ends exactly at its column's edge, long calls in backticks."""
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    (root / "lessons" / "ja").mkdir()
    shutil.copy(TESTS / "fixtures" / "layout" / "01_basics.md", root / "lessons" / "ja" / "01_basics.md")
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE / "exercises", ws / "exercises")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(root))
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(ws))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(tmp_path / "progress.json"))
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.delenv("JAXLINGS_SEED", raising=False)
    return root


def matches_snapshot(name: str, text: str) -> None:
    """`text` (trailing spaces dropped) equals tests/shell_snapshots/<name>."""
    shown = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    path = SNAPSHOTS / name
    if os.environ.get("JAXLINGS_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(shown, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    diff = "\n".join(difflib.unified_diff(expected.splitlines(), shown.splitlines(), "expected", "shown", lineterm=""))
    assert shown == expected, f"{name} differs from its snapshot (JAXLINGS_UPDATE_SNAPSHOTS=1 rewrites it):\n{diff}"


# -- every lesson, in both languages ------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("name", LESSONS)
def test_every_lesson_shows_every_character_and_breaks_lines_by_the_rules(capsys, at_80, lang, name):
    source = REPO / "lessons" / (f"ja/{name}" if lang == "ja" else name)
    code, shown = _render(capsys, "--lang", lang, "lesson", name[:2], "--no-pager")
    assert code == 0
    problems = lesson_problems(source.read_text(encoding="utf-8"), shown)
    assert not problems, "\n".join(problems)


# -- the checks themselves catch what they are for --------------------------------------------


def test_the_layout_checks_catch_a_cut_cell_and_each_kinsoku_break():
    markdown = "| a | b |\n|---|---|\n| x | バッチごとにコンパイル済みのステップを 1 回 |\n"
    shown = ("\n a   b\n ───────────────\n x   バッチごとにコンパイル済みのステップ …\n"
             "     1 回\n\n")
    problems = lesson_problems(markdown, shown)
    assert any("cut" in p for p in problems) and any("'を': 1" in p for p in problems), problems
    assert layout_problems("計算グラフもありません\n)。") == ["line 2 starts with ')': ')。'"]
    assert layout_problems("日\n々のコード")[0].startswith("line 2 starts with '々'")
    assert layout_problems("...where)\n。")[0] == "line 2 starts with '。': '。'"
    assert layout_problems(" 1 回    ステップ\n         ーを")[0].startswith("line 2 starts with 'ー'")
    assert layout_problems("(」")[0].startswith("line 1 is punctuation alone")
    assert layout_problems("│ foo(\n│ )", code_panels=True) == []  # code keeps its lines
    assert layout_problems("x" * 81)[0].startswith("line 1 is 81 cells wide")
    assert layout_problems(".to(device) and `.grad` 「JAX」は、変更できません。") == []


# -- snapshots in Japanese -----------------------------------------------------------------


def test_japanese_lesson_at_80_columns(fixture_course, capsys):
    code, shown = _render(capsys, "--lang", "ja", "lesson", "1", "--no-pager")
    assert code == 0
    source = (fixture_course / "lessons" / "ja" / "01_basics.md").read_text(encoding="utf-8")
    assert not lesson_problems(source, shown), "\n".join(lesson_problems(source, shown))
    matches_snapshot("lesson_ja_80.txt", shown)


def test_japanese_failing_check_at_80_columns(fixture_course, capsys):
    code, shown = _render(capsys, "--lang", "ja", "check", "fx_scale", "--seed", "5")
    assert code == 1 and "まだ合格していません" in shown
    assert not layout_problems(shown), "\n".join(layout_problems(shown))
    matches_snapshot("check_ja_80.txt", shown)


@pytest.mark.parametrize("argv", [[], ["reset"]], ids=["jaxlings", "reset"])
def test_japanese_help_at_80_columns(fixture_course, capsys, argv):
    code, shown = _render(capsys, "--lang", "ja", *argv, "--help")
    assert code == 0
    assert not layout_problems(shown), "\n".join(layout_problems(shown))
    matches_snapshot(f"help_{'_'.join(argv) or 'jaxlings'}_ja_80.txt", shown)


def _without_usage(text: str) -> str:
    """The help after its usage lines: argparse cannot break a long `{choice,...}` there."""
    return text.split("\n\n", 1)[1] if "\n\n" in text else text


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_every_commands_help_breaks_lines_by_the_rules(fixture_course, capsys, lang):
    problems = []
    for command in ["", *COMMANDS]:
        code, shown = _render(capsys, "--lang", lang, *([command] if command else []), "--help")
        assert code == 0, command
        problems += [f"{command or 'jaxlings'} --help: {p}" for p in layout_problems(_without_usage(shown))]
    assert not problems, "\n".join(problems)


def test_the_reset_question_breaks_lines_by_the_rules(fixture_course, capsys, monkeypatch):
    import io
    import sys

    ws = Path(os.environ["JAXLINGS_WORKSPACE"])
    # A long path, so that the question takes three lines at 80 columns.
    deep = ws / ("ワークスペース" * 3) / "exercises"
    shutil.move(ws / "exercises", deep)
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(deep.parent))
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    code, shown = _render(capsys, "--lang", "ja", "reset", "fx_scale")
    joined = shown.replace("\n", "")
    assert code == 1 and "元の初期ファイルに戻しますか?" in joined and "[y/N]" in joined
    question = shown[:shown.index("[y/N]") + len("[y/N]")]  # the answer's echo is no part of it here
    assert len(question.splitlines()) >= 3
    assert not layout_problems(question), "\n".join(layout_problems(question))
    assert str(deep / "01_basics" / "scale.py") in joined  # a broken path loses nothing

"""The Japanese starters (starters/ja/, same paths as exercises/) and when a learner gets them.

The course's exercises, read from the catalog, so an exercise added without a Japanese
starter fails here by name: each starter has the English one's code exactly (the same AST
once docstrings are dropped and the `NotImplementedError` messages set aside), and says its
task, comments and messages in Japanese. Whether the Japanese starter fails its check like
the English one (and never errors the check) is tests/test_exercises.py's `-starter-ja` cases.

Then the workspace, on the small fixture course: the first time a learner works on an
exercise in Japanese its untouched English starter becomes the Japanese one, and only then;
`reset` restores the starter in the language in use; the app's task pane follows.
"""

from __future__ import annotations

import ast
import io
import json
import re
import shutil
import subprocess
import tokenize
from pathlib import Path

import pytest

from course import i18n
from course.catalog import load_catalog, validate
from course.cli import main

REPO = Path(__file__).resolve().parents[1]
CATALOG = load_catalog()
FIXTURE = Path(__file__).parent / "fixtures" / "course"
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def _ja(ex) -> Path:
    return CATALOG.root / "starters" / "ja" / ex.file


def test_every_exercise_has_a_japanese_starter():
    missing = [f"{ex.name}: starters/ja/{ex.file}" for ex in CATALOG.exercises if not _ja(ex).is_file()]
    assert not missing, ("exercises with no Japanese starter (a Japanese learner would get the English one); "
                         "write starters/ja/<file> for each:\n  " + "\n  ".join(missing))
    known = {ex.file for ex in CATALOG.exercises}
    stray = sorted(str(p.relative_to(CATALOG.root / "starters" / "ja"))
                   for p in (CATALOG.root / "starters" / "ja").rglob("*.py"))
    assert [p for p in stray if p not in known] == [], "Japanese starters of no exercise in the catalog"
    assert validate() == []  # `jaxlings doctor` says the same


def _without_docstrings(tree: ast.AST) -> tuple[list[str], list[str]]:
    """Drop every docstring and put a placeholder for each NotImplementedError's message;
    returns (the docstrings, those messages), in order."""
    docstrings: list[str] = []
    messages: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                docstrings.append(body[0].value.value)
                node.body = body[1:] or [ast.Pass()]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "NotImplementedError":
            for i, arg in enumerate(node.args):
                assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), ast.dump(arg)
                messages.append(arg.value)
                node.args[i] = ast.Constant("<message>")
    return docstrings, messages


def _comments(source: str) -> list[str]:
    return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]


@pytest.mark.parametrize("name", [ex.name for ex in CATALOG.exercises])
def test_the_japanese_starter_has_the_same_code_and_japanese_words(name):
    ex = CATALOG.exercise(name)
    english_path, japanese_path = CATALOG.root / "exercises" / ex.file, _ja(ex)
    if not japanese_path.is_file():
        pytest.fail(f"no Japanese starter starters/ja/{ex.file} for {name}")
    english, japanese = english_path.read_text(encoding="utf-8"), japanese_path.read_text(encoding="utf-8")
    en_tree, ja_tree = ast.parse(english), ast.parse(japanese)

    en_doc, ja_doc = ast.get_docstring(en_tree), ast.get_docstring(ja_tree)
    assert ja_doc and JAPANESE.search(ja_doc), "the task statement (module docstring) is not Japanese"
    assert en_doc and not JAPANESE.search(en_doc)

    (en_docs, en_messages), (ja_docs, ja_messages) = _without_docstrings(en_tree), _without_docstrings(ja_tree)
    assert ast.dump(en_tree) == ast.dump(ja_tree), "the code differs from the English starter's"
    assert len(en_docs) == len(ja_docs)
    for en, ja in zip(en_docs, ja_docs):  # the classes' and functions' docstrings too
        assert JAPANESE.search(ja), f"the docstring {ja!r} is not Japanese (English: {en!r})"
    assert len(en_messages) == len(ja_messages)
    for en, ja in zip(en_messages, ja_messages):
        assert JAPANESE.search(ja), f"NotImplementedError({ja!r}) is not Japanese (English: {en!r})"

    en_comments, ja_comments = _comments(english), _comments(japanese)
    assert len(en_comments) == len(ja_comments), "a comment was added or lost"
    for en, ja in zip(en_comments, ja_comments):
        assert ja != en, f"the comment {en!r} is not translated"
        assert JAPANESE.search(ja) or not re.search(r"[A-Za-z]+ [a-z]+ [a-z]+", en.lstrip("# ")), ja
    assert japanese.endswith("\n") and "\r" not in japanese


# -- the workspace ------------------------------------------------------------------------

JA_SCALE = '''"""`x * alpha + 1` を JAX の配列として返します。"""
import jax.numpy as jnp


def scale(x, alpha):
    raise NotImplementedError("scale を書いてください")
'''


@pytest.fixture
def course(tmp_path, monkeypatch):
    """The fixture course with a Japanese starter for fx_scale only, a separate workspace."""
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    (root / "starters" / "ja" / "01_basics").mkdir(parents=True)
    (root / "starters" / "ja" / "01_basics" / "scale.py").write_text(JA_SCALE, encoding="utf-8")
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE / "exercises", ws / "exercises")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(root))
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(ws))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(tmp_path / "progress.json"))
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.delenv("JAXLINGS_SEED", raising=False)
    for var in ("JAXLINGS_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    return root, ws


def _scale(root: Path):
    return load_catalog(root).exercise("fx_scale")


def test_the_first_check_in_japanese_gives_the_japanese_starter_which_fails_like_the_english(course, capsys):
    root, ws = course
    mine = ws / "exercises" / "01_basics" / "scale.py"
    english = mine.read_bytes()
    capsys.readouterr()
    assert main(["--lang", "ja", "check", "fx_scale", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert mine.read_text(encoding="utf-8") == JA_SCALE
    assert data["passed"] is False and data["cause"] == "exception"  # failed, not a check error
    assert "scale を書いてください" in data["message"] + json.dumps(data["checks"], ensure_ascii=False)

    # Fixed from now on: English does not change it back, Japanese does not change it again.
    assert main(["check", "fx_scale", "--json"]) == 1
    assert mine.read_text(encoding="utf-8") == JA_SCALE
    # An exercise with no Japanese starter keeps its English one.
    stats = ws / "exercises" / "01_basics" / "stats.py"
    before = stats.read_bytes()
    assert main(["--lang", "ja", "check", "fx_stats", "--json"]) == 1
    assert stats.read_bytes() == before
    assert english != mine.read_bytes()


def test_the_starter_is_localized_only_while_untouched_and_unrecorded(course):
    from course.progress import Progress
    from course.workspace import localize_starter

    root, ws = course
    ex = _scale(root)
    mine = ex.exercise_path()
    english = mine.read_text(encoding="utf-8")
    assert not localize_starter(ex, lang="en") and mine.read_text(encoding="utf-8") == english

    mine.write_text(english + "# mine\n", encoding="utf-8")  # an edit, however small, is theirs
    assert not localize_starter(ex, lang="ja")
    assert mine.read_text(encoding="utf-8") == english + "# mine\n"

    mine.write_text(english, encoding="utf-8")
    Progress.load().reveal_hint("fx_scale")  # a hint read in English
    assert "fx_scale" in Progress.load().exercises
    assert not localize_starter(ex, lang="ja")  # worked on already (in English): its language is fixed
    assert mine.read_text(encoding="utf-8") == english

    Path(Progress.load().path).unlink()
    mine.unlink()
    assert not localize_starter(ex, lang="ja")  # a missing file is not created: reset does that
    assert not mine.exists()
    mine.write_text(english, encoding="utf-8")
    assert localize_starter(ex, lang="ja")
    assert mine.read_text(encoding="utf-8") == JA_SCALE


def test_reset_restores_the_starter_in_the_language_in_use(course, capsys):
    root, ws = course
    mine = ws / "exercises" / "01_basics" / "scale.py"
    english = (root / "exercises" / "01_basics" / "scale.py").read_text(encoding="utf-8")
    backups = ws / ".jaxlings" / "backups"

    mine.write_text("def scale(x, alpha):\n    return x\n", encoding="utf-8")
    assert main(["--lang", "ja", "reset", "fx_scale", "--yes"]) == 0
    assert mine.read_text(encoding="utf-8") == JA_SCALE
    (kept,) = backups.iterdir()  # their code, as usual
    assert kept.read_text(encoding="utf-8") == "def scale(x, alpha):\n    return x\n"

    # Switched to English: the file stays Japanese until a reset, which then has nothing to
    # keep (a starter as shipped, in any language, is not the learner's code).
    assert main(["check", "fx_scale", "--json"]) == 1
    assert mine.read_text(encoding="utf-8") == JA_SCALE
    assert main(["reset", "fx_scale", "--yes"]) == 0
    assert mine.read_text(encoding="utf-8") == english
    assert len(list(backups.iterdir())) == 1

    # And back: a reset in Japanese brings the Japanese one, still with nothing to keep.
    assert main(["--lang", "ja", "reset", "fx_scale", "--yes"]) == 0
    assert mine.read_text(encoding="utf-8") == JA_SCALE
    assert len(list(backups.iterdir())) == 1


def test_in_a_git_checkout_the_japanese_starter_replaces_the_committed_english_one(tmp_path, monkeypatch):
    from course.workspace import localize_starter, pristine_starter

    root = tmp_path / "clone"
    shutil.copytree(FIXTURE, root)
    (root / "starters" / "ja" / "01_basics").mkdir(parents=True)
    (root / "starters" / "ja" / "01_basics" / "scale.py").write_text(JA_SCALE, encoding="utf-8")
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "course"], check=True)
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(root))
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(tmp_path / "progress.json"))
    ex = _scale(root)
    english = pristine_starter(ex, "en")
    assert ex.exercise_path() == root / "exercises" / "01_basics" / "scale.py"
    assert localize_starter(ex, lang="ja")
    assert ex.exercise_path().read_text(encoding="utf-8") == JA_SCALE
    assert pristine_starter(ex, "en") == english  # still the committed one, from git
    assert pristine_starter(ex, "ja") == JA_SCALE


def test_the_task_pane_reads_the_statement_in_the_language_in_use(course):
    from course.tui.screens.exercise import translated_task

    root, ws = course
    ex = _scale(root)
    english = (root / "exercises" / "01_basics" / "scale.py").read_text(encoding="utf-8")
    assert translated_task(ex, JA_SCALE) == "Return `x * alpha + 1` as a JAX array."  # the English statement
    assert translated_task(ex, english) == "Return `x * alpha + 1` as a JAX array."
    i18n.set_language("ja")
    assert translated_task(ex, JA_SCALE) == "`x * alpha + 1` を JAX の配列として返します。"


def test_doctor_names_a_starter_missing_from_a_language_the_course_ships(course):
    root, _ws = course
    problems = validate(root)
    assert problems == [
        "exercise 'fx_stats': starter starters/ja/01_basics/stats.py is missing (learners in 'ja' get the English one)",
        "exercise 'fx_devices': starter starters/ja/02_devices/devices.py is missing "
        "(learners in 'ja' get the English one)",
    ]
    shutil.rmtree(root / "starters")
    assert validate(root) == []  # a course with no Japanese starters at all is complete


def test_a_first_hint_in_japanese_gives_the_japanese_starter_before_the_hint_is_recorded(course, capsys):
    root, ws = course
    mine = ws / "exercises" / "01_basics" / "scale.py"
    assert main(["--lang", "ja", "hint", "fx_scale"]) == 0
    assert mine.read_text(encoding="utf-8") == JA_SCALE
    # In English first, the hint fixes the English starter: a later Japanese check keeps it.
    english = (root / "exercises" / "01_basics" / "stats.py").read_text(encoding="utf-8")
    (root / "starters" / "ja" / "01_basics" / "stats.py").write_text("# 日本語\n" + english, encoding="utf-8")
    assert main(["hint", "fx_stats"]) == 0
    from course.workspace import localize_starter

    assert not localize_starter(load_catalog(root).exercise("fx_stats"), lang="ja")
    assert (ws / "exercises" / "01_basics" / "stats.py").read_text(encoding="utf-8") == english

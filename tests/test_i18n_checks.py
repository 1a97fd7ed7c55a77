"""A failed check in Japanese on every path that runs one: the CLI in its own process,
the check server (one server, each request in its own language), the app's check
service, watch, and the grader's feedback files. The learner's process sends its
failures as phrases and fields; the trusted side builds them in the learner's language."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from rich.console import Console

from course import i18n
from course.cli import main
from course.engine import server
from course.engine.words import CHILD_PHRASES, probe_said, render, say

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "course"
GRADER_COURSE = Path(__file__).parent / "grader_fixtures" / "course"
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
WRONG = "import jax.numpy as jnp\n\ndef scale(x, alpha):\n    return jnp.asarray(x) * alpha\n"
_FIELD = re.compile(r"\{[^{}]*\}")


def engine_sentences() -> set[str]:
    """The fixed English words of the engine's message templates (what the learner's process
    and the checks' helpers say), each run of two words or more between placeholders."""
    with i18n.po_path("ja").open("rb") as f:
        catalog = read_po(f)
    templates = set(CHILD_PHRASES)
    templates |= {m.id for m in catalog if isinstance(m.id, str) and m.id
                  and any(loc.startswith("course/engine/") for loc, _line in m.locations)}
    pieces = set()
    for template in templates:
        for piece in _FIELD.split(template):
            piece = piece.strip(" .:,()`")
            if len(re.findall(r"[A-Za-z]+", piece)) >= 2:
                pieces.add(piece)
    return pieces


def assert_no_engine_english(text: str) -> None:
    found = sorted(p for p in engine_sentences() if p in text)
    assert not found, f"English from the engine's templates: {found}\n{text}"


def test_the_engine_sentences_cover_what_the_bug_showed():
    pieces = engine_sentences()
    for english in ("while running", "Traceback (your code", "the check, line", "values differ",
                    "while the check used your code", "Largest difference at index"):
        assert any(english in p or p in english for p in pieces), english


@pytest.fixture
def course(tmp_path, monkeypatch):
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE / "exercises", ws / "exercises")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(root))
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(ws))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(tmp_path / "progress.json"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("JAXLINGS_SEED", raising=False)
    for var in ("JAXLINGS_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    return root, ws


def _assert_japanese_raise(text: str) -> None:
    """The fixture starter raises NotImplementedError in `scale`, also inside the check's jit probe."""
    assert "`scale` の実行中に NotImplementedError が発生しました。" in text, text
    assert "チェックがコードを使っている間に NotImplementedError が発生しました。" in text, text
    assert "トレースバック (あなたのコード):" in text
    assert "exercises/01_basics/scale.py、6 行目、scale の中" in text
    assert "チェック、4 行目、_jitted の中" in text
    assert "NotImplementedError: write scale" in text  # the learner's own exception, quoted as it is
    assert_no_engine_english(text)


def _assert_japanese_wrong_value(text: str) -> None:
    assert "値が違います" in text and "期待値:" in text and "最大の差はインデックス" in text, text
    assert_no_engine_english(text)


def test_cli_check_in_this_process_speaks_japanese(course, capsys, monkeypatch):
    _root, ws = course
    capsys.readouterr()
    assert main(["--lang", "ja", "check", "fx_scale", "--seed", "5"]) == 1
    _assert_japanese_raise(capsys.readouterr().out)

    (ws / "exercises" / "01_basics" / "scale.py").write_text(WRONG)
    monkeypatch.setenv("JAXLINGS_LANG", "ja")
    assert main(["check", "fx_scale", "--seed", "5"]) == 1
    _assert_japanese_wrong_value(capsys.readouterr().out)


def test_syntax_errors_and_wrong_signatures_in_japanese(course, capsys):
    _root, ws = course
    learner = ws / "exercises" / "01_basics" / "scale.py"
    learner.write_text("def scale(x, alpha):\n    return x *\n")
    capsys.readouterr()
    assert main(["--lang", "ja", "check", "fx_scale", "--seed", "5"]) == 1
    out = capsys.readouterr().out
    assert "exercises/01_basics/scale.py、2 行目: invalid syntax" in out, out
    assert_no_engine_english(out)
    learner.write_text("def scale(x):\n    return x\n")
    assert main(["--lang", "ja", "check", "fx_scale", "--seed", "5"]) == 1
    out = capsys.readouterr().out
    assert "では、`scale(x)` を呼び出せません。" in out, out
    assert_no_engine_english(out)


def test_the_app_check_service_speaks_japanese(course):
    from course.catalog import load_catalog
    from course.tui.services import Services

    root, _ws = course
    i18n.set_language("ja")
    services = Services()
    try:
        result = services.run_check(load_catalog(root).exercise("fx_scale"))
    finally:
        services.close()
    assert not result.passed
    _assert_japanese_raise("\n".join(c.message for c in result.checks))


def test_watch_speaks_japanese(course, tmp_path):
    from test_watch import Script

    from course.catalog import load_catalog
    from course.engine.runner import CheckSession
    from course.shell.watching import WatchLoop

    root, ws = course
    (ws / "exercises" / "01_basics" / "scale.py").write_text(WRONG)
    catalog = load_catalog(root)
    i18n.set_language("ja")
    out = io.StringIO()
    with CheckSession() as session:
        loop = WatchLoop(catalog, catalog.exercise("fx_scale"), check=session.run,
                         console=Console(file=out, width=200), events=Script([("key", "q")]), keys=True,
                         watch=lambda path, q: None, progress_path=tmp_path / "p.json")
        assert loop.run() == 0
    _assert_japanese_wrong_value(out.getvalue())


def test_one_server_answers_each_request_in_its_language(course, tmp_path):
    root, ws = course
    env = {**os.environ, "JAXLINGS_SERVER": "1", "JAXLINGS_SERVER_IDLE": "300"}
    for var in ("JAXLINGS_LANG", "JAXLINGS_PROGRESS"):
        env.pop(var, None)

    def check(*argv: str, **extra: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "course", *argv, "check", "fx_scale", "--seed", "5"],
                              env={**env, **extra}, cwd=ws, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 1 and "unavailable" not in proc.stderr, proc.stdout + proc.stderr
        return proc.stdout

    def pid() -> int:
        return server._call(server.server_dir(ws / ".jaxlings"), {"op": "ping"}, 30)["pid"]

    try:
        english = check("--lang", "en")
        assert "NotImplementedError while running `scale`." in english and not JAPANESE.search(english)
        first = pid()
        _assert_japanese_raise(check(JAXLINGS_LANG="ja"))
        assert pid() == first  # the same server, started in English, answered in Japanese
        (ws / "exercises" / "01_basics" / "scale.py").write_text(WRONG)
        _assert_japanese_wrong_value(check("--lang", "ja"))
        back = check("--lang", "en")
        assert "values differ" in back and not JAPANESE.search(back)
        assert pid() == first
    finally:
        subprocess.run([sys.executable, "-c", "from course.engine import server; server.stop()"],
                       env={**env, "JAXLINGS_WORKSPACE": str(ws)}, cwd=REPO, timeout=60)


def test_grade_lang_ja_writes_japanese_feedback_and_english_fields(tmp_path):
    class_dir, out = tmp_path / "class", tmp_path / "out"
    ex = class_dir / "raiser" / "exercises" / "01_basics"
    ex.mkdir(parents=True)
    shutil.copy(GRADER_COURSE / "exercises" / "01_basics" / "scale.py", ex / "scale.py")
    wrong = class_dir / "wrong" / "exercises" / "01_basics"
    wrong.mkdir(parents=True)
    (wrong / "scale.py").write_text("def scale(x, factor):\n    return x + factor\n")
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(GRADER_COURSE)}
    env.pop("JAXLINGS_SEED", None)
    env.pop("JAXLINGS_LANG", None)
    proc = subprocess.run([sys.executable, "-m", "course", "--lang", "ja", "grade", str(class_dir), "--out",
                           str(out), "--jobs", "1", "--seed", "7", "--quiet"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    raiser = (out / "feedback" / "raiser.txt").read_text(encoding="utf-8")
    assert "得点: 0 /" in raiser and "例外を送出" in raiser, raiser
    assert "`scale` の実行中に NotImplementedError が発生しました。" in raiser
    assert "トレースバック (あなたのコード):" in raiser
    assert_no_engine_english(raiser)
    wrong_text = (out / "feedback" / "wrong.txt").read_text(encoding="utf-8")
    assert "結果が違う" in wrong_text and "シード" in wrong_text
    assert_no_engine_english(wrong_text)
    for text in (raiser, wrong_text):
        assert "Score:" not in text and "feedback for" not in text and "Rerun with" not in text
    # What scripts read stays English: keys, causes, outcomes.
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    causes = {s["id"]: s["exercises"]["scale"]["cause"] for s in report["submissions"]}
    assert causes == {"raiser": "exception", "wrong": "wrong_result"}
    outcomes = {c["outcome"] for s in report["submissions"] for c in s["exercises"]["scale"]["checks"]}
    assert outcomes <= {"passed", "failed", "error", "skipped"}


# -- what the learner's process may send -------------------------------------------------


def test_the_parent_builds_only_known_phrases_and_shows_fields_as_text():
    i18n.set_language("ja")
    lines = [say("{error} {during}.", error="ValueError", during=say("while running `{name}`", name="{f}")),
             "ValueError: {0.__class__}"]
    assert render(lines) == "`{f}` の実行中に ValueError が発生しました。\nValueError: {0.__class__}"
    assert render(lines, lambda m: m) == "ValueError while running `{f}`.\nValueError: {0.__class__}"
    # Anything else is refused, and the caller keeps the child's own message.
    assert render([["{error.__class__.__mro__}", {"error": "x"}]]) is None
    assert render([say("{error} {during}.", error="E")]) is None  # a field missing
    assert render([say("{error} {during}.", error=["x"] * 3, during="d")]) is None
    assert render([say("{error} {during}.", error=True, during="d")]) is None
    deep: list = say("in the check")
    for _ in range(5):
        deep = say("{error} {during}.", error="E", during=deep)
    assert render([deep]) is None
    assert render("not a list") is None and render([3]) is None



def test_a_probes_error_is_worded_here_from_the_checks_own_phrases():
    """A probe, which runs in the learner's process, names one of its check's PROBE_ERRORS
    and sends the fields; the check words it in the learner's language."""
    from course.checks.test_train_titanic import PROBE_ERRORS

    said = ["tuple_length", {"type": "tuple", "n": 2}]
    try:
        i18n.set_language("ja")
        assert probe_said(said, PROBE_ERRORS) == ("train_titanic は長さ 2 の tuple を返しました。"
                                                  "期待されるのはタプル (model, history, orders) です。")
        assert probe_said(["not_dict", {"type": "{0.__class__}"}], PROBE_ERRORS).startswith(
            "evaluate は {0.__class__} を返しました。")  # a field is shown as text, never formatted
    finally:
        i18n.set_language("en")
    assert probe_said(said, PROBE_ERRORS) == ("train_titanic returned tuple of length 2, expected a tuple "
                                              "(model, history, orders).")
    # Anything else is refused, and the check shows what came back as it is.
    assert probe_said(["{type.__class__}", {"type": "x"}], PROBE_ERRORS) is None
    assert probe_said(["tuple_length", {"type": "tuple"}], PROBE_ERRORS) is None  # a field missing
    assert probe_said(["tuple_length", {"type": "tuple", "n": True}], PROBE_ERRORS) is None
    assert probe_said(["tuple_length", {"type": ["x"], "n": 2}], PROBE_ERRORS) is None
    assert probe_said("train_titanic returned a list", PROBE_ERRORS) is None

# -- doctor ----------------------------------------------------------------------------------


def test_unmarked_messages_are_found_where_a_check_hands_them_over():
    from course.i18n.unmarked import unmarked_in

    source = '''
from course.engine.checking import CheckFailure, assert_close, fail
from course.engine.words import _

def test_it(learner):
    assert_close(1, 2, what=f"relu(x) of shape {(3,)}")
    assert_close(1, 2, what=_("relu(x) of shape {shape}").format(shape=(3,)))
    assert_close(1, 2, what="relu(x)")
    fail("softmax returned nan: " + "subtract the maximum first.")
    fail(_("softmax returned nan."))
    raise CheckFailure(f"{1} values differ")
    assert 1 == 2, "the loss went up"
    assert 1 == 2, _("the loss went up")
'''
    found = unmarked_in(source)
    assert [line for line, _text in found] == [6, 9, 11, 12]
    assert "subtract the maximum first" in found[1][1]


def test_doctor_never_calls_the_edition_complete_while_checks_speak_english(course, capsys, monkeypatch):
    from course.i18n import state as translation_state

    root, _ws = course
    state = translation_state.language_state("ja", [], root / "lessons", root)
    # The fixture course's check describes its call in English: `what=f"scale(x of shape ...)"`.
    assert state["unmarked"] >= 1
    said = "\n".join(translation_state.warnings({"ja": state}))
    assert f"{state['unmarked']} " in said and "not marked for translation" in said
    capsys.readouterr()
    main(["--lang", "ja", "doctor"])
    out = capsys.readouterr().out
    assert "翻訳の対象になっていません" in out
    assert "すべてのメッセージとレッスンが翻訳されています" not in out
    # Marking the check's message takes it off the count.
    scale_check = root / "checks" / "test_fx_scale.py"
    text = scale_check.read_text()
    assert 'what=f"scale(x of shape {x.shape}, {alpha:.3f})"' in text
    scale_check.write_text(text.replace('what=f"scale(x of shape {x.shape}, {alpha:.3f})"',
                                        'what=_("scale(x of shape {shape}, {alpha:.3f})").format(shape=x.shape, '
                                        'alpha=alpha)'))
    after = translation_state.language_state("ja", [], root / "lessons", root)["unmarked"]
    assert after == state["unmarked"] - 1


def test_the_runners_own_words_follow_the_language(tmp_path):
    from course.engine.check_run import DEFAULT_MESSAGES, _source_line

    learner = tmp_path / "scale.py"
    learner.write_text("import jax\n\nkey = jax.random.key(0)\n")
    i18n.set_language("ja")
    assert _source_line(learner, "exercises/scale.py", 3) == "exercises/scale.py の 3 行目: key = jax.random.key(0)"
    assert i18n._(DEFAULT_MESSAGES["KeyReuseError"]).startswith("コードが、すでに使った PRNG キー")
    i18n.set_language("en")
    assert _source_line(learner, "exercises/scale.py", 3) == "line 3 of exercises/scale.py: key = jax.random.key(0)"


def test_a_probes_text_fields_are_shown_escaped_and_bounded():
    from course.engine.words import MAX_FIELD_CHARS, N_, probe_said

    phrases = {"said": N_("{type} came back")}
    shown = probe_said(["said", {"type": "Evil\x1b[2J\u202e{0.__class__}" + "x" * 1000}], phrases)
    assert "\x1b" not in shown and "\u202e" not in shown
    assert "\\x1b[2J" in shown and "\\u202e" in shown and "{0.__class__}" in shown
    assert len(shown) <= MAX_FIELD_CHARS + len(" came back")
    assert probe_said(["said", {"type": 3}], phrases) == "3 came back"
    assert probe_said(["said", {"type": 2.5}], phrases) is None

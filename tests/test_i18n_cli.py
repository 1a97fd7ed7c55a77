"""The shell commands in Japanese: how the language is chosen, what the learner reads,
the layout of double-width text, the check messages' fixed phrases, and what `doctor`
says about the state of a translation."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from rich.cells import cell_len
from rich.console import Console

from course import i18n
from course.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "course"
REPO = Path(__file__).resolve().parents[1]
JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@pytest.fixture
def course(tmp_path, monkeypatch):
    """The fixture course in a workspace of its own, with no language chosen by anything."""
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
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


def run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- choosing the language ---------------------------------------------------------------


def test_lang_flag_list_is_japanese_and_english_stays_english(course, capsys):
    code, out, _err = run(capsys, "--lang", "ja", "list")
    assert code == 0
    for word in ("レッスン", "演習", "状態", "未着手", "0/3 完了", "→ 次: fx_scale"):
        assert word in out
    code, out, _err = run(capsys, "list")
    assert code == 0
    assert "lesson" in out and "pending" in out and "0/3 done" in out
    assert not JAPANESE.search(out)


@pytest.mark.parametrize("env", [{"JAXLINGS_LANG": "ja"}, {"LANG": "ja_JP.UTF-8"}, {"LC_ALL": "ja_JP.UTF-8"}])
def test_the_environment_chooses_japanese(course, capsys, monkeypatch, env):
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    code, out, _err = run(capsys, "list")
    assert code == 0 and "未着手" in out


def test_jaxlings_lang_beats_the_locale_and_the_flag_beats_both(course, capsys, monkeypatch):
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert "pending" in run(capsys, "list")[1]
    monkeypatch.setenv("JAXLINGS_LANG", "ja")
    assert "未着手" in run(capsys, "list")[1]
    out = run(capsys, "--lang", "en", "list")[1]
    assert "pending" in out and not JAPANESE.search(out)


def test_the_saved_choice_is_used_without_flag_or_env(course, capsys):
    _root, ws = course
    i18n.save_language("ja", ws / ".jaxlings")
    assert "未着手" in run(capsys, "list")[1]


def test_hint_and_errors_in_japanese(course, capsys):
    code, out, _err = run(capsys, "--lang", "ja", "hint", "fx_scale")
    assert code == 0 and "ヒント 1/2: Multiply." in out
    code, out, err = run(capsys, "--lang", "ja", "hint", "fx_scal")
    assert code == 2
    assert "エラー:" in err and "という名前の演習はありません" in err and "fx_scale" in err
    code, out, err = run(capsys, "--lang", "ja", "hint", "99")
    assert code == 2 and "番号 99 の演習はありません" in err and "1 から 3 まで" in err and "# 列" in err


def test_check_in_japanese_keeps_the_seed_once(course, capsys):
    code, out, _err = run(capsys, "--lang", "ja", "check", "fx_scale", "--seed", "11")
    assert code == 1
    assert "✗ fx_scale: まだ合格していません" in out
    assert "2 件のチェックのうち 2 件が失敗しました" in out
    assert "✗ test_scale_matches" in out
    # One seed line for the whole report, in Japanese, with the number to type.
    assert out.count("JAXLINGS_SEED=11") == 1 and "シード 11" in out
    assert "rerun with" not in out


def test_check_json_says_it_in_japanese_under_english_keys(course, capsys):
    code, out, _err = run(capsys, "--lang", "ja", "check", "fx_scale", "--seed", "3", "--json")
    data = json.loads(out)
    assert code == 1 and set(data) >= {"exercise", "passed", "cause", "message", "checks", "seed"}
    assert data["cause"] == "exception"  # the starter raises; the cause is a key for scripts, never translated
    assert data["message"].startswith("コードが例外を送出しました: 2 件のチェックのうち 2 件が失敗しました。")


def test_doctor_json_reports_translations(course, capsys):
    code, out, _err = run(capsys, "--lang", "ja", "doctor", "--json")
    data = json.loads(out)
    assert "ja" in data["translations"]
    # The fixture course has no lessons/ja/: both its lessons are reported as missing.
    assert data["translations"]["ja"]["lessons_missing"] == ["01_basics.md", "02_devices.md"]


# -- watch ------------------------------------------------------------------------------


def test_watch_key_help_and_messages_in_japanese(course, tmp_path):
    
    from course.catalog import load_catalog
    from course.engine.results import CheckOutcome, ExerciseResult
    from course.shell.watching import WatchLoop

    root, _ws = course
    catalog = load_catalog(root)
    verdicts = [False, True]

    def check(exercise):
        passed = verdicts.pop(0)
        outcome = CheckOutcome("test_it", "passed" if passed else "failed", None if passed else "wrong_result",
                               "" if passed else "1 != 2", 0.01)
        return ExerciseResult(exercise.name, passed, None if passed else "wrong_result",
                              "ok" if passed else "Wrong result", [outcome], 0.1, 5)

    from test_watch import Script  # hands out the next key only when the loop waits for one

    events = Script([("key", k) for k in ("n", "h", "c", "q")])
    out = io.StringIO()
    i18n.set_language("ja")
    loop = WatchLoop(catalog, catalog.exercise("fx_scale"), check=check, console=Console(file=out, width=100),
                     events=events, keys=True, watch=lambda path, q: None, progress_path=tmp_path / "p.json")
    assert loop.run() == 0
    text = out.getvalue()
    assert "h ヒント  l 一覧  c 再チェック  q 終了" in text  # before a pass: no `n`
    assert "n 次  h ヒント" in text  # after the pass
    assert "fx_scale に合格すると、`n` で次に進めます" in text
    assert "ヒント 1/2: Multiply." in text
    assert "(再チェック: 保存時)" in text
    assert "quit" not in text and "check again" not in text


def test_the_elapsed_line_in_japanese():
    from course.shell.terminal import _ElapsedLine

    clock = iter([0.0, 4.2]).__next__
    i18n.set_language("ja")
    assert _ElapsedLine("fx_scale", 30.0, clock=clock).text() == "fx_scale をチェック中… 4 秒 (コードの実行は 30 秒まで)"


# -- layout -----------------------------------------------------------------------------


def _separators(line: str) -> list[int]:
    """The cell columns of a table line's vertical borders."""
    cols, at = [], 0
    for ch in line:
        if ch in "│┃":
            cols.append(at)
        at += cell_len(ch)
    return cols


def test_japanese_list_fits_80_columns_and_stays_aligned(tmp_path, capsys, monkeypatch):
    from course.catalog import load_catalog

    catalog = load_catalog(REPO)
    names = [ex.name for ex in catalog.exercises]
    # The widest states: done, and trying with a cause.
    progress = {"format_version": 1, "exercises": {
        names[0]: {"done": True, "attempts": 2, "last_cause": None, "first_pass": None, "hints_seen": 0},
        names[1]: {"done": False, "attempts": 12, "last_cause": "not_plain_data", "first_pass": None,
                   "hints_seen": 0}}}
    (tmp_path / "progress.json").write_text(json.dumps(progress))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(tmp_path / "progress.json"))
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("JAXLINGS_COURSE_ROOT", raising=False)
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    code, out, _err = run(capsys, "--lang", "ja", "list")
    assert code == 0
    lines = out.rstrip("\n").splitlines()
    assert all(cell_len(line) <= 80 for line in lines), max(lines, key=cell_len)
    table = [line for line in lines if line[:1] in "│┃┏┡└"]
    rows = [line for line in table if line[:1] in "│┃"]
    assert len({tuple(_separators(line)) for line in rows}) == 1  # every border in the same column
    assert len({cell_len(line) for line in table}) == 1
    header = next(line for line in rows if "レッスン" in line)
    for heading in ("レッスン", "演習", "状態", "試行"):
        assert heading in header
    joined = "\n".join(rows)
    for name in names:  # no name cut
        assert re.search(rf"│ {re.escape(name)}\s", joined), name
    for number, lesson in enumerate(catalog.lessons, 1):  # each lesson with the number `lesson` takes
        assert re.search(rf"│ +{number} {re.escape(lesson.name)}\s", joined), lesson.name
    assert "完了" in joined and "挑戦中" in joined


# -- check messages -----------------------------------------------------------------------


def _failure(fn, *args, **kw) -> str:
    from course.engine.checking import CheckFailure

    with pytest.raises(CheckFailure) as info:
        fn(*args, **kw)
    return str(info.value)


def test_check_messages_fixed_phrases_are_translated_with_the_numbers_kept(monkeypatch):
    from course.engine import checking

    monkeypatch.setattr(checking, "_current_seed", 4242)
    got = np.array([1.0, 2.0, 3.5], dtype=np.float32)
    want = np.array([1.0, 2.0, 3.25], dtype=np.float32)
    english = _failure(checking.assert_close, got, want, what="the loss")
    assert "expected:" in english and "Largest difference at index (2,)" in english

    i18n.set_language("ja")
    text = _failure(checking.assert_close, got, want, what="the loss")
    assert "値が違います (形状 (3,)、rtol=1e-05、atol=1e-06)" in text
    assert "最大の差はインデックス (2,): 期待値 np.float32(3.25)、実際は np.float32(3.5)。" in text
    assert "(シード 4242: JAXLINGS_SEED=4242 で同じ入力のまま再実行できます)" in text
    assert not re.search(r"\b(expected|got|Largest difference|rerun)\b", text)
    # "期待値:" and "実際:" differ in width: the two previews still start in the same column.
    want_line = next(line for line in text.splitlines() if line.startswith("期待値:"))
    got_line = next(line for line in text.splitlines() if line.startswith("実際:"))
    assert cell_len(want_line[:want_line.index("[")]) == cell_len(got_line[:got_line.index("[")])

    text = _failure(checking.assert_close, np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), what="w")
    assert "w: 期待した形状は (3, 2)、実際の形状は (2, 3) でした (形状 (2, 3)、dtype float32 の配列)。" in text
    text = _failure(checking.assert_equal, [1, 2], [1, 2, 3], what="xs")
    assert "xs: 要素数は 3 個のはずが、2 個でした。" in text
    text = _failure(checking.assert_close, None, 1.5, what="y")
    assert "y: 期待値は float ですが、None が返りました。`return` を忘れていませんか?" in text


def test_headlines_and_summaries_follow_the_language():
    from course.engine.results import CheckOutcome, ExerciseResult

    failed = ExerciseResult("x", False, "timeout", "", [CheckOutcome("t", "failed", "timeout", "", 0.0)], 0.0, 1)
    assert failed.headline == "Your code took too long"
    i18n.set_language("ja")
    assert failed.headline == "コードの実行に時間がかかりすぎました"
    passed = ExerciseResult("x", True, None, "", [], 0.0, 1)
    assert passed.headline == "すべてのチェックに合格しました"


def test_the_failure_report_drops_a_japanese_seed_line_from_each_check():
    from course.shell.commands import failure_report
    from course.engine.checking import seed_line
    from course.engine.results import CheckOutcome, ExerciseResult

    i18n.set_language("ja")
    checks = [CheckOutcome(f"test_{k}", "failed", "wrong_result", f"bad {k}\n{seed_line(9)}", 0.0) for k in "ab"]
    report = failure_report(ExerciseResult("x", False, "wrong_result", "", checks, 0.0, 9))
    assert report.count("JAXLINGS_SEED=9") == 1
    assert report.startswith("結果が違います: 2 件のチェックのうち 2 件が失敗しました")


# -- doctor -----------------------------------------------------------------------------


@pytest.fixture
def locale_copy(tmp_path, monkeypatch):
    """A copy of the catalogs to damage, used in place of the real ones."""
    copy = tmp_path / "locale"
    shutil.copytree(i18n.LOCALE_DIR, copy, ignore=shutil.ignore_patterns("*.mo"))
    monkeypatch.setattr(i18n, "LOCALE_DIR", copy)
    return copy / "ja" / "LC_MESSAGES"


def _edit_po(path: Path, change) -> None:
    from babel.messages.pofile import read_po, write_po

    with path.open("rb") as f:
        catalog = read_po(f, locale="ja")
    change(catalog)
    with path.open("wb") as f:
        write_po(f, catalog, width=0)


def _lessons(*files: str) -> list:
    return [SimpleNamespace(file=f) for f in files]


def test_doctor_counts_an_untranslated_and_a_fuzzy_message(locale_copy, tmp_path):
    from course.i18n.state import language_state, warnings

    def blank_two(catalog):
        catalog["Wrong result"].string = ""
        catalog["Nothing changed."].flags.add("fuzzy")

    _edit_po(locale_copy / "jaxlings.po", blank_two)
    state = language_state("ja", [], tmp_path)
    assert state["untranslated"].get("jaxlings") == 2
    said = "\n".join(warnings({"ja": state}))
    assert "2 messages of the jaxlings catalog have no translation" in said
    assert "jaxlings.po" in said


def test_doctor_reports_a_catalog_that_does_not_compile_and_the_course_goes_on_in_english(locale_copy, tmp_path):
    from course.i18n.state import language_state, warnings

    po = locale_copy / "jaxlings.po"
    good = po.read_bytes()
    po.write_bytes(good + b"\ngarbage line\n")
    state = language_state("ja", [], tmp_path)
    assert "misformatted" in state["broken_catalogs"]["jaxlings"]
    said = "\n".join(warnings({"ja": state}))
    assert "the jaxlings catalog does not compile cleanly" in said and "then run `make`" in said

    po.write_bytes(good + b'\nmsgid "x"\nmsgstr "\xff\xfe"\n')  # not UTF-8: it cannot be read at all
    assert "UnicodeDecodeError" in language_state("ja", [], tmp_path)["broken_catalogs"]["jaxlings"]
    assert i18n.set_language("ja") == "ja"  # no crash: that domain's messages stay in English
    assert i18n._("Wrong result") == "Wrong result"


def test_doctor_reports_a_translation_with_other_placeholders(locale_copy, tmp_path):
    from course.i18n.state import language_state, warnings

    def break_one(catalog):
        catalog["Your code was saved to {path}."].string = "{パス} に保存しました。"

    _edit_po(locale_copy / "jaxlings.po", break_one)
    state = language_state("ja", [], tmp_path)
    assert state["placeholder_mismatches"]["jaxlings"] == ["Your code was saved to {path}."]
    assert "names other {placeholders} than the English" in "\n".join(warnings({"ja": state}))


def test_doctor_counts_messages_of_the_code_missing_from_the_catalog(tmp_path):
    from course.i18n.state import language_state, warnings

    shutil.copy(REPO / "babel-ui.cfg", tmp_path / "babel-ui.cfg")
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "new.py").write_text(
        'from course.i18n import _\n\nprint(_("Wrong result"), _("A message no catalog has yet"))\n', encoding="utf-8")
    state = language_state("ja", [], tmp_path / "lessons", tmp_path)
    assert state["not_in_catalog"] == {"jaxlings": 1}  # the other domains' settings are not in this folder
    said = "\n".join(warnings({"ja": state}))
    assert "1 message of the code is not in the jaxlings catalog yet" in said and "`make catalogs`" in said


def test_doctor_lists_lessons_with_no_japanese_edition(tmp_path):
    from course.i18n.state import language_state, warnings

    (tmp_path / "ja").mkdir()
    (tmp_path / "ja" / "01_a.md").write_text("# ア\n", encoding="utf-8")
    state = language_state("ja", _lessons("01_a.md", "02_b.md"), tmp_path)
    assert state["lessons_missing"] == ["02_b.md"]
    assert "1 lesson has no edition in lessons/ja/ (02_b.md)" in "\n".join(warnings({"ja": state}))


def test_doctor_prints_the_translation_warnings(course, capsys, locale_copy):
    _edit_po(locale_copy / "jaxlings.po", lambda c: setattr(c["Wrong result"], "string", ""))
    code, out, _err = run(capsys, "doctor")
    assert "Translations" in out
    assert "1 message of the jaxlings catalog has no translation" in out
    assert "2 lessons have no edition in lessons/ja/" in out


def test_every_japanese_message_keeps_the_placeholders_and_markup_of_its_english():
    from babel.messages.pofile import read_po

    from course.i18n.state import _placeholder_mismatches

    with i18n.po_path("ja").open("rb") as f:
        catalog = read_po(f, locale="ja")
    assert i18n.missing_translations("ja") == []
    assert _placeholder_mismatches(catalog) == []
    tags = re.compile(r"\[/?(?:bold|dim|red|green|yellow|cyan|bold red|bold green|bold cyan)?\]")
    for message in catalog:
        if message.id and isinstance(message.id, str):
            assert sorted(tags.findall(message.string)) == sorted(tags.findall(message.id)), message.id


# -- argparse, the lab, the editor, the grader ----------------------------------------------


def test_argparse_words_and_errors_in_japanese(course, capsys):
    with pytest.raises(SystemExit) as info:
        main(["--lang", "ja", "solution"])
    assert info.value.code == 2
    assert "jaxlings solution: エラー: 次の引数が必要です: name" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--lang", "ja", "--help"])
    out = capsys.readouterr().out
    assert "オプション:" in out and "このヘルプを表示して終了します" in out
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "options:" in out and "show this help message and exit" in out and not JAPANESE.search(out)


@pytest.mark.parametrize("argv", [["--help"], ["train", "--help"], ["check", "--help"], ["reset", "--help"]])
def test_japanese_help_wraps_by_cells_at_80_columns(course, capsys, monkeypatch, argv):
    monkeypatch.setenv("COLUMNS", "80")
    with pytest.raises(SystemExit):
        main(["--lang", "ja", *argv])
    out = capsys.readouterr().out
    assert JAPANESE.search(out)
    assert all(cell_len(line) <= 80 for line in out.splitlines()), max(out.splitlines(), key=cell_len)


def test_wrap_cells_breaks_beside_wide_characters_and_never_before_a_comma():
    from course.shell.terminal import wrap_cells

    lines = wrap_cells("あいうえおかきくけこ、さしすせそ PyTorch と JAX", 11)
    assert all(cell_len(line) <= 11 for line in lines)
    assert "".join(lines).replace(" ", "") == "あいうえおかきくけこ、さしすせそPyTorchとJAX"
    assert not any(line.startswith("、") for line in lines)
    assert wrap_cells("two words", 20) == ["two words"]


def test_lab_report_in_japanese_fits_80_columns():
    from test_lab import known_report, printed_report

    from course.i18n import linebreak

    linebreak.install()  # as `jaxlings` does at start
    i18n.set_language("ja")
    report = known_report()
    text = printed_report(report, 80)
    lines = text.splitlines()
    assert all(cell_len(line) <= 80 for line in lines), max(lines, key=cell_len)
    assert "…" not in text
    for word in ("速度: タイタニック号の MLP、500 エポック、バッチ 32", "バリアント", "コンパイル s", "全体 s", "トレーニング",
                 "損失", "正解率", "ハードウェア:", "* 20 エポックの実測から 500 エポックに外挿"):
        assert word in text
    for r in report.results:
        assert f"{r.test_accuracy:.3f}" in text and f"{r.final_loss:.4f}" in text
    # Double-width headings still sit over their right-aligned numbers.
    head = next(line for line in lines if "バリアント" in line and "コンパイル s" in line)
    row = next(line for line in lines if line.strip().startswith("nnx_jit "))
    assert cell_len(head.rstrip()) == cell_len(row.rstrip())
    # Japanese prose wraps between characters, not only at spaces: no short line left behind.
    prose = lines[lines.index(next(line for line in lines if line.startswith("バッチ:"))):][:3]
    assert all(cell_len(line) >= 70 for line in prose[:2]), prose


def test_doctor_editor_line_in_japanese(course, capsys, monkeypatch):
    from course.editor import describe_editor

    monkeypatch.setenv("EDITOR", "no-such-editor-here")
    monkeypatch.delenv("VISUAL", raising=False)
    i18n.set_language("ja")
    editor = describe_editor()
    assert "'no-such-editor-here' は PATH にありません" in editor["problem"]
    assert editor["ctrl_o"] == "エディタを開く代わりにこの問題を表示します"


def test_grader_summary_in_japanese():
    from course.grader.console import summary_table

    console = Console(file=io.StringIO(), width=200, color_system=None)
    subs = [{"id": "ann", "status": "graded", "total": 1, "max_total": 2,
             "exercises": {"a": {"exercise": "a", "passed": True, "cause": None},
                           "b": {"exercise": "b", "passed": False, "cause": "wrong_result"}}}]
    iso = {"tier": "bubblewrap", "passed_over": [], "guarantees": {"network_off": True, "solutions_hidden": True,
                                                                   "other_submissions_hidden": True,
                                                                   "unprivileged": False}}
    i18n.set_language("ja")
    summary_table(subs, iso, "out", console=console)
    text = console.file.getvalue()
    assert "成績" in text and "提出物" in text and "不合格 (理由)" in text
    assert "有効な隔離: bubblewrap (ネットワーク遮断: はい" in text and "非特権: いいえ" in text
    assert "レポートの場所 out: report.json" in text


def test_the_isolation_notice_in_japanese():
    from course.engine.isolation import Isolation

    iso = Isolation("process", tried=("bwrap is missing",))
    assert iso.notice().startswith("Isolation: process (NOT sandboxed")
    i18n.set_language("ja")
    notice = iso.notice()
    assert notice.startswith("隔離: process (サンドボックスなし: ")
    assert "より強い隔離は使えません: bwrap is missing。直し方は `jaxlings doctor` で確認できます。" in notice
    assert iso.describe()["summary"].startswith("NOT sandboxed")  # the report keeps its English


def test_a_missing_or_broken_manifest_is_explained_in_japanese(course, capsys):
    root, _ws = course
    manifest = root / "lessons" / "course.toml"
    manifest.write_text("format_version = 1\ntitle = [\n")
    code, _out, err = run(capsys, "--lang", "ja", "list")
    assert code == 2
    assert f"{root} のコースのマニフェストが壊れています (問題 1 件、最初の問題: " in err
    assert f"`jaxlings --course {root} doctor` で一覧を表示できます" in err
    manifest.unlink()
    code, _out, err = run(capsys, "--lang", "ja", "list")
    assert code == 2
    assert f"{root} はコースではありません: lessons/course.toml がありません" in err


def test_train_explains_a_bad_variant_in_japanese(course, capsys):
    code, _out, err = run(capsys, "--lang", "ja", "train", "--variants", "foo")
    assert code == 2
    assert "jaxlings train: 不明なバリアントです: foo。次から選んでください:" in err


def test_train_explains_a_missing_data_file_in_japanese(course, capsys, tmp_path):
    code, _out, err = run(capsys, "--lang", "ja", "train", "--data", str(tmp_path / "none.csv"))
    assert code == 2 and "none.csv: そのファイルはありません。" in err


# -- English left on the learning path -----------------------------------------------------

# What the lab said in English where it is shown: the hardware, the variants' labels, the plot.
LAB_ENGLISH = ("JAX on", "PyTorch on", "CPU core", "device:", "Flax NNX,", "Flax Linen,", "eager loop",
               "jit step", "lax.scan over", "Training loss per epoch", "on device", "stopped after", "not started")


def test_lab_report_and_plot_in_japanese_leave_no_english_and_the_json_stays_english(capsys):
    from test_lab import known_report, printed_report

    from course.i18n import linebreak

    linebreak.install()
    report = known_report()
    report.results[2].status, report.results[2].error = "failed", "boom"
    stopped, unstarted = report.results[3], report.results[4]
    stopped.status, stopped.losses, stopped.error = "cancelled", stopped.losses[:5], "stopped after 5 of 500 epochs"
    unstarted.status, unstarted.losses, unstarted.error = "cancelled", [], "not started: the run was stopped"
    english = report.to_dict()
    i18n.set_language("ja")
    capsys.readouterr()
    text = printed_report(report, 100, plot=True) + capsys.readouterr().out  # the plot goes to stdout
    assert "ハードウェア: JAX は CPU (デバイス 1 台: cpu)、PyTorch は cpu、CPU コア 2 個" in text
    assert "Flax NNX、@nnx.jit のステップ は失敗しました: boom" in text and "Flax NNX、ツリーモード: nnx.jit_partial: 500 エポック中 5 エポックで止めました" in text
    assert "Flax NNX、split/merge + jax.jit: 未開始: 実行を止めました" in text and "デバイス上" in text
    assert "エポックごとのトレーニング損失" in text
    for phrase in LAB_ENGLISH:
        assert phrase not in text, phrase
    assert not [line for line in text.splitlines() if line.strip() == "epoch"]  # plotext's axis label
    # The title sits above plotext's frame, which keeps its width: every line fits the 100 columns.
    assert all(cell_len(line) <= 100 for line in text.splitlines()), max(text.splitlines(), key=cell_len)
    # Machine-readable: the report says the same English whatever the language.
    assert report.to_dict() == english
    assert english["hardware"]["summary"] == "JAX on CPU (1 device: cpu); PyTorch on cpu; 2 CPU cores"
    assert english["results"][2]["label"] == "Flax NNX, @nnx.jit step"


def test_hardware_is_described_in_the_language_in_use_and_as_detected_in_english():
    from course.lab.api import Hardware

    gpu = Hardware("gpu", ["cuda:0 NVIDIA H100", "cuda:1 NVIDIA H100"], "cuda",
                   "JAX on GPU (2 devices: NVIDIA H100); PyTorch on cuda (NVIDIA H100); 1 CPU core", 1,
                   device_kind="NVIDIA H100", torch_name="cuda (NVIDIA H100)")
    assert gpu.describe() == gpu.summary
    i18n.set_language("ja")
    assert gpu.describe() == "JAX は GPU (デバイス 2 台: NVIDIA H100)、PyTorch は cuda (NVIDIA H100)、CPU コア 1 個"
    # A report written before device_kind and torch_name were kept: the device names say the kind.
    old = Hardware("cpu", ["cpu:0 cpu"], "cpu", "JAX on CPU (1 device: cpu); PyTorch on cpu; 2 CPU cores", 2)
    assert old.describe() == "JAX は CPU (デバイス 1 台: cpu)、PyTorch は cpu、CPU コア 2 個"


def test_lab_progress_bars_and_help_name_the_variants_in_japanese():
    from course.lab.api import Progress
    from course.lab.cli import LABEL_CELLS, _LiveProgress, add_arguments

    i18n.set_language("ja")
    console = Console(file=io.StringIO(), width=140, color_system=None)
    with _LiveProgress(console) as progress:
        for variant in ("nnx_jit", "linen_jit"):
            progress.start(variant, 4)
            progress.update(Progress(variant=variant, epoch=2, epochs=4, loss=0.5, elapsed_s=1.0, eta_s=3.0))
    text = console.file.getvalue()
    assert "Flax NNX、@nnx.jit のステップ" in text and "Flax Linen、jax.jit のステップ" in text and "損失 0.5000" in text
    for phrase in LAB_ENGLISH + ("loss ",):
        assert phrase not in text, phrase
    # The bars start in one column whatever the label's width in cells.
    bars = [line for line in text.splitlines() if "損失" in line]
    assert len(bars) == 2 and {cell_len(line[:line.index("━")]) if "━" in line else None for line in bars} == {
        LABEL_CELLS + 1}
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert "nnx_jit = Flax NNX、@nnx.jit のステップ" in parser.epilog and "Flax NNX," not in parser.epilog


def test_isolation_reasons_are_translated_where_shown_and_kept_in_english_in_the_report(monkeypatch):
    from course.engine import isolation
    from course.grader.console import summary_table

    monkeypatch.setattr(isolation.shutil, "which", lambda name: None)
    missing = isolation._unavailable("bubblewrap")
    assert missing.startswith("bwrap is not installed (install bubblewrap")
    tried = ("bubblewrap: run as root, bwrap would map graded code to host root (the unshare tier does not)",
             "unshare: does not start here (bwrap: setting up uid map: Permission denied)",
             f"bubblewrap: {missing}", "unshare: the sandbox does not hold: network")
    iso = isolation.Isolation("process", tried=tried)
    i18n.set_language("ja")
    notice = iso.notice()
    assert "bubblewrap: root で実行しているため、bwrap では採点するコードがホストの root に対応付けられます" in notice
    assert "unshare: この環境では起動しません (bwrap: setting up uid map: Permission denied)" in notice
    assert "bubblewrap: bwrap がインストールされていません (bubblewrap をインストールしてください" in notice
    assert "unshare: サンドボックスが守られていません: network" in notice
    for english in ("run as root", "does not start here", "is not installed", "install bubblewrap (", "does not hold"):
        assert english not in notice, english
    assert iso.describe()["passed_over"] == list(tried)  # report.json keeps the English
    console = Console(file=io.StringIO(), width=300, color_system=None)
    summary_table([], {"tier": "unshare", "passed_over": [tried[0]], "guarantees": {
        "network_off": True, "solutions_hidden": True, "other_submissions_hidden": True, "unprivileged": True}},
        "out", console=console)
    text = console.file.getvalue()
    assert "より強い隔離は使っていません: bubblewrap: root で実行しているため" in text and "run as root" not in text
    # Text that is not one of the reasons (an older report, a message of another kind) is left as it is.
    assert isolation.reason_text("bubblewrap: something new") == "bubblewrap: something new"


def test_a_pass_in_japanese_puts_no_space_after_the_full_stop():
    from course.shell.commands import print_result

    result = SimpleNamespace(passed=True, exercise="functional_ops", message="ok", output="", checks=[], seed=1)
    i18n.set_language("ja")
    console = Console(file=io.StringIO(), width=200, color_system=None)
    print_result(console, result)
    text = console.file.getvalue()
    assert ("完了です。`jaxlings solution functional_ops` で模範解答を見られます。`jaxlings check` で次の演習に進みます。"
            in text)
    assert "。 " not in text
    i18n.set_language("en")
    console = Console(file=io.StringIO(), width=200, color_system=None)
    print_result(console, result)
    assert "shows the reference solution. `jaxlings check` moves on" in console.file.getvalue()

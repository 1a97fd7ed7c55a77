"""The commands as scripts see them: exit codes, --json shapes, reset asking first."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "course"
REPO = Path(__file__).resolve().parents[1]
SOLVED_SCALE = (FIXTURE / "solutions" / "01_basics" / "scale.py").read_text()


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A pristine course root, a separate workspace, a private progress file."""
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURE / "exercises", ws / "exercises")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(root))
    monkeypatch.setenv("JAXLINGS_WORKSPACE", str(ws))
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(tmp_path / "progress.json"))
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.delenv("JAXLINGS_SEED", raising=False)
    return root, ws


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_check_fail_then_pass_then_list_and_solution(course, capsys):
    root, ws = course
    code, data = run_json(capsys, "check", "fx_scale", "--seed", "7")
    assert code == 1
    assert set(data) >= {"exercise", "passed", "cause", "message", "checks", "duration", "seed"}
    assert data["passed"] is False and data["cause"] == "exception" and data["seed"] == 7
    assert {c["name"] for c in data["checks"]} == {"test_scale_matches", "test_scale_under_jit"}
    assert all(set(c) == {"name", "outcome", "cause", "message", "duration", "file", "line"} for c in data["checks"])

    assert main(["solution", "fx_scale"]) == 1  # not before a pass
    assert "opens after your code passes" in capsys.readouterr().err

    (ws / "exercises" / "01_basics" / "scale.py").write_text(SOLVED_SCALE)
    code, data = run_json(capsys, "check")  # no name: the next pending one
    assert code == 0 and data["exercise"] == "fx_scale" and data["passed"] is True

    code, data = run_json(capsys, "list")
    assert code == 0
    assert data["done"] == 1 and data["total"] == 3 and data["next"] == "fx_stats"
    first = data["exercises"][0]
    assert first == {"number": 1, "name": "fx_scale", "lesson": "basics", "lesson_number": 1, "done": True,
                     "attempts": 2, "last_cause": None}

    code, data = run_json(capsys, "solution", "fx_scale")
    assert code == 0 and data["solution"] == SOLVED_SCALE and data["yours"] == SOLVED_SCALE


def test_usage_errors_exit_2(course, capsys, monkeypatch):
    assert main(["check", "no_such_exercise"]) == 2
    assert "no exercise named" in capsys.readouterr().err
    monkeypatch.setenv("JAXLINGS_SEED", "abc")
    assert main(["check", "fx_scale"]) == 2
    assert "JAXLINGS_SEED must be an integer" in capsys.readouterr().err
    assert main(["watch", "fx_scale"]) == 2
    assert "JAXLINGS_SEED must be an integer" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main(["solution"])  # missing argument: argparse's usage error
    assert e.value.code == 2


def test_broken_manifest_exits_2(course, capsys):
    root, _ = course
    (root / "lessons" / "course.toml").write_text("format_version = 2\ntitle = 'x'\nlessons = []\n")
    assert main(["list"]) == 2
    assert "format_version 2 is not supported" in capsys.readouterr().err


def test_hint_reveals_one_more_each_time(course, capsys):
    code, data = run_json(capsys, "hint", "fx_scale")
    assert code == 0 and data == {"exercise": "fx_scale", "hints": ["Multiply."], "remaining": 1}
    _, data = run_json(capsys, "hint", "fx_scale")
    assert data["hints"] == ["Multiply.", "Return `x * alpha + 1`."] and data["remaining"] == 0


def test_reset_asks_first(course, capsys, monkeypatch):
    root, ws = course
    mine = ws / "exercises" / "01_basics" / "scale.py"
    mine.write_text("# my work\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    assert main(["reset", "fx_scale"]) == 1
    assert "Replace" in capsys.readouterr().out
    assert mine.read_text() == "# my work\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # nobody to ask: nothing happens
    assert main(["reset", "fx_scale"]) == 1
    assert mine.read_text() == "# my work\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert main(["reset", "fx_scale"]) == 0
    assert mine.read_text() == (root / "exercises" / "01_basics" / "scale.py").read_text()


def test_hint_and_reset_default_to_the_current_exercise_like_check(course, capsys, monkeypatch):
    root, ws = course
    code, data = run_json(capsys, "hint")
    assert code == 0 and data["exercise"] == "fx_scale" and data["hints"] == ["Multiply."]
    (ws / "exercises" / "01_basics" / "scale.py").write_text(SOLVED_SCALE)
    assert main(["check", "fx_scale"]) == 0
    _, data = run_json(capsys, "hint")  # the next pending one now
    assert data["exercise"] == "fx_stats"

    mine = ws / "exercises" / "01_basics" / "stats.py"
    mine.write_text("# my work\n")
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    assert main(["reset"]) == 1  # still asks first, and names the exercise it means
    out = capsys.readouterr().out
    assert "The current exercise is fx_stats" in out and "Replace" in out and "stats.py" in out
    assert mine.read_text() == "# my work\n"
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert main(["reset"]) == 0
    assert mine.read_text() == (root / "exercises" / "01_basics" / "stats.py").read_text()


def test_hint_and_reset_with_every_exercise_done_say_so(course, capsys, monkeypatch):
    import os

    done = {"attempts": 1, "done": True, "first_pass": None, "hints_seen": 0, "last_cause": None}
    Path(os.environ["JAXLINGS_PROGRESS"]).write_text(json.dumps(
        {"format_version": 1, "exercises": {name: dict(done) for name in ("fx_scale", "fx_stats", "fx_devices")}}))
    for command in ("hint", "reset"):
        capsys.readouterr()
        assert main([command]) == 0
        assert f"Every exercise is done. Name the one to {command}" in capsys.readouterr().out


def test_list_shows_the_numbers_every_command_accepts(capsys, monkeypatch):
    from course.catalog import load_catalog
    from course.shell.lookup import find_exercise, find_lesson

    monkeypatch.setenv("JAXLINGS_PROGRESS", "/nonexistent/never-written.json")
    monkeypatch.setenv("COLUMNS", "80")
    catalog = load_catalog()
    code, data = run_json(capsys, "list")
    count = sum(len(lesson.exercises) for lesson in catalog.lessons)
    assert code == 0 and [r["number"] for r in data["exercises"]] == list(range(1, count + 1))
    assert max(r["lesson_number"] for r in data["exercises"]) == len(catalog.lessons)
    for row in data["exercises"]:
        assert find_exercise(catalog, str(row["number"])).name == row["name"]
        assert find_lesson(catalog, str(row["lesson_number"])).name == row["lesson"]
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    assert "│ 21 porting_cnn" in text and "│  3 pure_functions" in text
    assert "`jaxlings check 5` takes a number from the # column" in text.replace("\n", " ")


def test_reset_makes_a_passed_exercise_pending_and_keeps_a_backup(course, capsys):
    root, ws = course
    mine = ws / "exercises" / "01_basics" / "scale.py"
    mine.write_text(SOLVED_SCALE)
    code, _ = run_json(capsys, "check", "fx_scale")
    assert code == 0
    assert run_json(capsys, "list")[1]["done"] == 1

    assert main(["reset", "fx_scale", "--yes"]) == 0
    out = capsys.readouterr().out
    backups = list((ws / ".jaxlings" / "backups").iterdir())
    assert len(backups) == 1 and backups[0].name.startswith("fx_scale-") and backups[0].suffix == ".py"
    assert backups[0].read_text() == SOLVED_SCALE
    assert str(backups[0]) in out.replace("\n", "")
    assert mine.read_text() == (root / "exercises" / "01_basics" / "scale.py").read_text()

    code, data = run_json(capsys, "list")
    assert data["done"] == 0 and data["next"] == "fx_scale"
    assert data["exercises"][0]["done"] is False and data["exercises"][0]["attempts"] == 0

    # A second reset of a file that is the starter already has nothing to keep.
    assert main(["reset", "fx_scale", "--yes"]) == 0
    assert len(list((ws / ".jaxlings" / "backups").iterdir())) == 1


def test_reset_keeps_the_exact_bytes_of_a_file_that_is_not_utf8(course, capsys):
    root, ws = course
    mine = ws / "exercises" / "01_basics" / "scale.py"
    mine.write_bytes(b"# caf\xe9\nx = 1\n")
    assert main(["reset", "fx_scale", "--yes"]) == 0
    (backup,) = (ws / ".jaxlings" / "backups").iterdir()
    assert backup.read_bytes() == b"# caf\xe9\nx = 1\n"


def test_reset_in_a_git_checkout_uses_the_committed_starter(tmp_path, monkeypatch, capsys):
    root = tmp_path / "clone"
    shutil.copytree(FIXTURE, root)
    git = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "course"], check=True)
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(root))
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    mine = root / "exercises" / "01_basics" / "scale.py"
    pristine = mine.read_text()
    mine.write_text("# edited\n")
    assert main(["reset", "fx_scale", "--yes"]) == 0
    assert mine.read_text() == pristine


def test_reset_outside_git_explains(tmp_path, monkeypatch, capsys):
    root = tmp_path / "plain"
    shutil.copytree(FIXTURE, root)
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(root))
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert main(["reset", "fx_scale", "--yes"]) == 1
    assert "not a git checkout" in capsys.readouterr().err


def test_verify_is_complete_only_when_all_pass(course, capsys):
    root, ws = course
    (ws / "exercises" / "01_basics" / "scale.py").write_text(SOLVED_SCALE)
    code, data = run_json(capsys, "verify")
    assert code == 1 and data["complete"] is False and data["passed"] == 1 and data["total"] == 3
    assert [r["exercise"] for r in data["results"]] == ["fx_scale", "fx_stats", "fx_devices"]


def test_doctor_json_on_a_good_course(course, capsys):
    code, data = run_json(capsys, "doctor")
    assert code == 0 and data["problems"] == []
    assert data["versions"]["jax"] and data["devices"]


def test_check_as_a_script(course):
    proc = subprocess.run([sys.executable, "-m", "course", "check", "fx_stats"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Did you forget a `return`?" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("poll", [True, False], ids=["polling", "file-events"])
def test_watch_notices_a_save_made_right_after_it_started(tmp_path, poll):
    import queue

    from course.shell.watching import FileWatcher

    path = tmp_path / "ex.py"
    path.write_text("x = 1\n")
    events = queue.Queue()
    watcher = FileWatcher(path, events, poll=poll).start()
    try:
        tmp = tmp_path / ".ex.py.tmp"  # editors save by writing a temp file and renaming it
        tmp.write_text("x = 22\n")
        tmp.replace(path)
        assert events.get(timeout=60) == ("saved", path)
    finally:
        watcher.stop()


def test_check_fails_a_file_that_is_not_utf8(course, capsys):
    _, ws = course
    # Solved, but a Latin-1 byte sits in a comment, where compile() alone would not object.
    (ws / "exercises" / "01_basics" / "scale.py").write_bytes(b"# caf\xe9\n" + SOLVED_SCALE.encode())
    code, data = run_json(capsys, "check", "fx_scale")
    assert code == 1 and data["passed"] is False and data["cause"] == "syntax_error"
    assert ("exercises/01_basics/scale.py is not UTF-8 text (byte 0xe9 at line 1); "
            "Python reads source files as UTF-8") in data["message"]
    assert "\ufffd" not in data["message"]


def test_read_source_agrees_with_the_checks(tmp_path):
    from course.workspace import NotUtf8Error, read_source, utf8_problem

    assert utf8_problem("x = 'é'\n".encode(), "a.py") is None
    assert utf8_problem(b"x = 1\ny = '\xff'\n", "a.py").startswith("a.py is not UTF-8 text (byte 0xff at line 2)")
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"# caf\xe9\n")
    with pytest.raises(NotUtf8Error, match="byte 0xe9 at line 1"):
        read_source(bad)
    good = tmp_path / "good.py"
    good.write_text("x = 'é'\n", encoding="utf-8")
    assert read_source(good) == "x = 'é'\n"


def test_resolve_editor(tmp_path):
    from course.editor import resolve_editor

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("myedit", "code", "nano"):
        exe = bin_dir / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    path = str(bin_dir)
    assert resolve_editor({"PATH": path, "EDITOR": "myedit -n"}) == (["myedit", "-n"], None)
    assert resolve_editor({"PATH": path, "VISUAL": "myedit", "EDITOR": "nosuch"}) == (["myedit"], None)
    argv, problem = resolve_editor({"PATH": path, "EDITOR": "nosuch-editor"})
    assert argv is None and "'nosuch-editor' is not on PATH" in problem
    argv, problem = resolve_editor({"PATH": str(tmp_path / "empty"), "EDITOR": "code --wait"})
    assert argv is None and "'code' is not on PATH" in problem
    argv, problem = resolve_editor({"PATH": path, "EDITOR": "code"})  # starts, but returns at once
    assert argv == ["code"] and "--wait" in problem
    assert resolve_editor({"PATH": path, "EDITOR": "code --wait"}) == (["code", "--wait"], None)
    argv, problem = resolve_editor({"PATH": path, "EDITOR": "'unclosed"})
    assert argv is None and "cannot be split" in problem
    argv, problem = resolve_editor({"PATH": path, "EDITOR": str(tmp_path / "missing" / "ed")})
    assert argv is None and "does not exist" in problem
    assert resolve_editor({"PATH": path}) == (["nano"], None)  # nothing set: a fallback on PATH
    argv, problem = resolve_editor({"PATH": str(tmp_path / "empty")})
    assert argv is None and "neither $VISUAL nor $EDITOR is set" in problem


def test_doctor_reports_the_editor(course, capsys, monkeypatch):
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "nosuch-editor")
    code, data = run_json(capsys, "doctor")
    assert code == 0
    assert data["editor"]["EDITOR"] == "nosuch-editor" and data["editor"]["argv"] is None
    assert "'nosuch-editor' is not on PATH" in data["editor"]["problem"]
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "$EDITOR='nosuch-editor'" in out and "is not on PATH" in out
    assert "Ctrl+O in the app shows this problem instead of opening an editor" in out


@pytest.mark.parametrize("argv,code", [
    (["list", "--json"], 141),
    (["list"], 141),
    (["lesson", "1"], 141),
    (["--help"], 0),  # argparse ignores a failed write of its help and exits 0
    (["check", "--help"], 0),
])
def test_a_closed_pipe_ends_quietly(course, argv, code):
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first write: every write meets EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "course", *argv], cwd=REPO,
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert proc.stderr == ""
    assert proc.returncode == code


def test_check_shows_every_failing_check_and_the_seed_once(course, capsys):
    capsys.readouterr()
    assert main(["check", "fx_scale", "--seed", "11"]) == 1
    out = capsys.readouterr().out
    assert "2 of 2 checks failed" in out
    assert "✗ test_scale_matches" in out and "✗ test_scale_under_jit" in out
    assert out.count("seed 11") == 1 and "rerun with JAXLINGS_SEED=11" in out

    assert main(["check", "fx_scale", "--seed", "11", "--short"]) == 1
    out = capsys.readouterr().out
    assert "first: test_scale_matches" in out and "test_scale_under_jit" not in out
    assert out.count("seed 11") == 1


def test_near_misses_suggest_the_right_name(capsys, monkeypatch):
    from course.catalog import load_catalog

    monkeypatch.setenv("JAXLINGS_PROGRESS", "/nonexistent/never-written.json")
    catalog = load_catalog()
    lessons, exercises = len(catalog.lessons), len(catalog.exercises)
    for argv, suggestion in [
        (["lesson", "arrray"], "Did you mean: arrays?"),
        (["lesson", "Pure-Functions"], "Did you mean: pure_functions?"),
        (["check", "functional-ops"], "Did you mean: functional_ops?"),
        (["hint", "Functional_Ops"], "Did you mean: functional_ops?"),
        (["solution", "immutable_update"], "Did you mean: immutable_updates?"),
        (["lesson", "99"], f"there is no lesson number 99: lessons are numbered 1 to {lessons}, in the lesson column"),
        (["check", "99"], f"there is no exercise number 99: exercises are numbered 1 to {exercises}, in the # column"),
        (["hint", "zzzzzz"], "Run `jaxlings list` to see them."),
    ]:
        assert main(argv) == 2, argv
        assert suggestion in capsys.readouterr().err.replace("\n", " "), argv


def test_lessons_and_exercises_by_number_or_file(capsys):
    from course.catalog import load_catalog
    from course.shell.lookup import find_exercise, find_lesson

    catalog = load_catalog()
    assert find_lesson(catalog, "2").name == catalog.lessons[1].name == "arrays"
    assert find_lesson(catalog, "02_arrays.md").name == "arrays"
    assert find_lesson(catalog, "lessons/02_arrays.md").name == "arrays"
    assert find_lesson(catalog, "02_arrays").name == "arrays"
    assert find_lesson(catalog, "interop").name == "arrays"  # an exercise's name gives its lesson
    assert find_exercise(catalog, "1").name == "functional_ops"
    assert find_exercise(catalog, "exercises/01_ecosystem/functional_ops.py").name == "functional_ops"
    assert find_exercise(catalog, "functional_ops.py").name == "functional_ops"
    assert main(["lesson", "2", "--no-pager"]) == 0
    assert "immutable" in capsys.readouterr().out.lower()


def _terminal_env(tmp_path, **extra):
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "PAGER", "LESS", "FORCE_COLOR", "COLUMNS")}
    env.update(TERM="xterm-256color", JAXLINGS_PROGRESS=str(tmp_path / "progress.json"), **extra)
    return env


def test_lesson_goes_through_the_pager_only_on_a_terminal(tmp_path, capsys, monkeypatch):
    from pty_run import run_on_pty

    paged = tmp_path / "paged.txt"
    env = _terminal_env(tmp_path, PAGER=f"cat > '{paged}'")
    code, shown = run_on_pty(["lesson", "2"], env)
    assert code == 0, shown
    text = paged.read_text()
    assert "immutable" in text.lower() and "\x1b[" in text  # the lesson, with its styles
    assert "immutable" not in shown.lower()

    paged.unlink()
    code, shown = run_on_pty(["lesson", "2", "--no-pager"], env)
    assert code == 0 and "immutable" in shown.lower() and not paged.exists()

    code, shown = run_on_pty(["lesson", "2"], {**env, "TERM": "dumb"})
    assert code == 0 and "immutable" in shown.lower() and not paged.exists()

    monkeypatch.setenv("PAGER", f"cat > '{paged}'")  # stdout is not a terminal here: never a pager
    assert main(["lesson", "2"]) == 0
    assert "immutable" in capsys.readouterr().out.lower() and not paged.exists()


def test_shell_modules_do_not_import_textual():
    code = ("import sys\n"
            "import course.workspace, course.editor, course.shell.lookup, course.shell.watching, course.shell.terminal, course.cli\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] == 'textual')))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_learner_text_cannot_drive_the_terminal(course, capsys):
    _, ws = course
    (ws / "exercises" / "01_basics" / "scale.py").write_text(
        'def scale(x, alpha):\n'
        '    print("out \\x1b]0;TITLE\\x07 \\udcff")\n'
        '    raise ValueError("boom \\x1b[2J \\u202e")\n')
    capsys.readouterr()
    assert main(["check", "fx_scale"]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "boom \\x1b[2J \\u202e" in out and "out \\x1b]0;TITLE" in out


def test_solution_still_shows_when_your_file_is_not_utf8(course, capsys):
    _, ws = course
    mine = ws / "exercises" / "01_basics" / "scale.py"
    mine.write_text(SOLVED_SCALE)
    assert run_json(capsys, "check", "fx_scale")[0] == 0
    mine.write_bytes(b"# caf\xe9\n")
    code, data = run_json(capsys, "solution", "fx_scale")
    assert code == 0 and data["solution"] == SOLVED_SCALE and data["yours"] is None
    assert main(["solution", "fx_scale"]) == 0
    captured = capsys.readouterr()
    assert "reference solution" in captured.out and "is not UTF-8 text (byte 0xe9 at line 1)" in captured.err


def test_sigusr1_prints_the_stacks_of_a_running_jaxlings():
    import subprocess
    import sys

    code = ("import os, signal\nfrom course.cli import _stacks_on_sigusr1\n_stacks_on_sigusr1()\n"
            "os.kill(os.getpid(), signal.SIGUSR1)\nprint('still running')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 0 and "still running" in proc.stdout
    assert "most recent call first" in proc.stderr and "<string>" in proc.stderr


def test_the_check_box_keeps_links_whole_and_wrapped_lines_indented():
    from rich.console import Console

    from course.engine.results import CheckOutcome, ExerciseResult
    from course.shell.commands import print_result

    url = "https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError"
    message = ("jax.errors.TracerBoolConversionError: Attempted boolean conversion of traced array with shape "
               f"bool[] inside clip_by_norm, which jax.jit traces with abstract values.\nSee {url}")
    result = ExerciseResult("jit_branch", False, "exception", message,
                            [CheckOutcome("test_clip", "failed", "exception", message, 0.1)], 0.1, 1)
    console = Console(width=80, file=io.StringIO(), color_system=None)
    print_result(console, result)
    out = console.file.getvalue()
    assert url in out.splitlines()[-1]  # whole, on one line, under the box
    rows = [row.strip("│").rstrip() for row in out.splitlines() if row.startswith("│")]
    first = next(i for i, row in enumerate(rows) if "TracerBoolConversionError: Attempted" in row)
    # The message is indented under its check; its continued rows are indented further, not at column 0.
    assert rows[first].startswith("   jax.errors") and rows[first + 1].startswith("     ")
    assert all(len(row) <= 80 for row in out.splitlines() if row[:1] in "│╭╰")


def test_a_failed_check_names_the_same_file_and_line_in_every_language(course, capsys, monkeypatch):
    """The place of a failure is a field of the result (for editors, scripts and the app's go-to-line),
    not words of the message: English and Japanese give the same one."""
    from course import i18n

    places, messages = {}, {}
    try:
        for lang in ("en", "ja"):
            monkeypatch.setenv("JAXLINGS_LANG", lang)
            code, data = run_json(capsys, "check", "fx_scale", "--seed", "7")
            assert code == 1 and data["cause"] == "exception"
            failed = [(c["file"], c["line"]) for c in data["checks"] if c["outcome"] != "passed"]
            places[lang] = (data["file"], data["line"], failed)
            messages[lang] = data["message"]
    finally:
        i18n.set_language(i18n.DEFAULT)
    # The starter's `raise NotImplementedError(...)` is line 6 of 01_basics/scale.py.
    assert places["en"] == places["ja"] == ("exercises/01_basics/scale.py", 6,
                                            [("exercises/01_basics/scale.py", 6)] * 2)
    assert messages["en"] != messages["ja"]  # the words are in each language; the place is the same

"""A course of one's own: `jaxlings --course DIR` and JAXLINGS_COURSE_ROOT select it for every command.

Each test builds a tiny course in tmp_path by writing its files (a manifest, one
lesson, one exercise with its starter, solution and check), then uses it the way an
instructor's learners would: list, check, hint, the language it names, progress kept
apart from another course's, grading a class and a Gradescope bundle carrying it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from gradescope_run import run_bundle
from course import i18n, paths
from course.cli import main

REPO = Path(__file__).resolve().parents[1]

CHECK = """\
import numpy as np

from course.engine.checking import assert_close


def test_doubles(learner, reference, rng):
    x = rng.normal(size=(int(rng.integers(2, 5)),)).astype(np.float32)
    assert_close(learner.call("double", x), reference.call("double", x), what="double(x)")
"""
STARTER = "def double(x):\n    raise NotImplementedError\n"
SOLVED = "def double(x):\n    return x * 2\n"


def make_course(folder: Path, title: str = "Doubling 101", language: str | None = None,
                exercise: str = "double") -> Path:
    """A course root: lessons/course.toml, one lesson, one exercise, its solution and check."""
    manifest = [
        "format_version = 1",
        f"title = {json.dumps(title)}",
        *([f"language = {json.dumps(language)}"] if language else []),
        "",
        "[[lessons]]",
        'name = "basics"',
        'title = "Basics"',
        'file = "01_basics.md"',
        "",
        "  [[lessons.exercises]]",
        f'  name = "{exercise}"',
        '  file = "01_basics/double.py"',
        f'  check = "test_{exercise}"',
        '  hints = ["Multiply by two.", "Return `x * 2`."]',
    ]
    files = {
        "lessons/course.toml": "\n".join(manifest) + "\n",
        "lessons/01_basics.md": "# Basics\n\nDouble a number.\n",
        "exercises/01_basics/double.py": STARTER,
        "solutions/01_basics/double.py": SOLVED,
        f"checks/test_{exercise}.py": CHECK,
        f"alternatives/{exercise}/by_addition.py": "def double(x):\n    return x + x\n",
        f"attacks/{exercise}/near_triple.py": '"""Triples."""\nMESSAGE = r"double"\n\ndef double(x):\n    return 3 * x\n',
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def env(monkeypatch):
    """No course, workspace or progress file chosen by the environment; whatever a test's
    `main(["--course", ...])` sets in os.environ is undone after it."""
    for var in ("JAXLINGS_COURSE_ROOT", "JAXLINGS_WORKSPACE", "JAXLINGS_PROGRESS", "JAXLINGS_SEED"):
        monkeypatch.setenv(var, "x")  # recorded as unset, so teardown unsets it again
        monkeypatch.delenv(var)
    monkeypatch.setenv("COLUMNS", "120")
    return monkeypatch


def run_json(capsys, *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_list_hint_and_check_use_the_course_named_by_the_option_or_the_environment(tmp_path, env, capsys):
    root = make_course(tmp_path / "doubling")
    code, data = run_json(capsys, "--course", str(root), "list")
    assert code == 0 and data["title"] == "Doubling 101" and [r["name"] for r in data["exercises"]] == ["double"]
    assert main(["list", "--course", str(root)]) == 0  # after the command too
    assert "Doubling 101: 0/1 done" in capsys.readouterr().out
    assert main(["--course", str(root), "hint", "double"]) == 0
    assert "Multiply by two." in capsys.readouterr().out

    # The workspace is the course folder itself: its starter is the learner's file, its state is beside it.
    (root / "exercises" / "01_basics" / "double.py").write_text(SOLVED)
    env.delenv("JAXLINGS_COURSE_ROOT")
    env.setenv("JAXLINGS_COURSE_ROOT", str(root))
    code, data = run_json(capsys, "check", "--seed", "3")
    assert code == 0 and data["exercise"] == "double" and data["passed"] is True, data["message"]
    assert {c["name"] for c in data["checks"]} == {"test_doubles"}
    progress = json.loads((root / ".jaxlings" / "progress.json").read_text())
    assert progress["exercises"]["double"]["done"] is True
    assert progress["exercises"]["double"]["hints_seen"] == 1


def test_the_option_wins_over_the_environment(tmp_path, env, capsys):
    first, second = make_course(tmp_path / "a", title="Course A"), make_course(tmp_path / "b", title="Course B")
    env.setenv("JAXLINGS_COURSE_ROOT", str(first))
    assert run_json(capsys, "list")[1]["title"] == "Course A"
    assert run_json(capsys, "--course", str(second), "list")[1]["title"] == "Course B"


def test_the_title_comes_from_the_manifest_in_doctor_and_the_app(tmp_path, env, capsys):
    root = make_course(tmp_path / "doubling", title="Doubling 101")
    code, report = run_json(capsys, "--course", str(root), "doctor")
    assert report["course"]["title"] == "Doubling 101" and report["course"]["root"] == str(root.resolve())
    assert report["course"]["state"] == str(root.resolve() / ".jaxlings")
    assert report["problems"] == [] and code == 0
    from course.catalog import load_catalog
    from course.tui.app import JaxlingsApp

    app = JaxlingsApp()
    app.catalog = load_catalog(root)
    assert app.course_subtitle() == "Doubling 101"
    app.catalog = load_catalog(paths.BUILTIN_ROOT)  # the built-in course keeps its own line
    assert app.course_subtitle() == JaxlingsApp.SUB_TITLE
    i18n.set_language("ja")
    assert app.course_subtitle() == "PyTorch から JAX、Flax、Optax へ"
    app.catalog = load_catalog(root)
    assert app.course_subtitle() == "Doubling 101"


def test_the_manifest_language_is_the_default_and_lang_overrides_it(tmp_path, env, capsys):
    for var in ("JAXLINGS_LANG", "LC_ALL", "LC_MESSAGES"):
        env.delenv(var, raising=False)
    env.setenv("LANG", "C.UTF-8")
    japanese, plain = make_course(tmp_path / "ja", language="ja"), make_course(tmp_path / "en")
    assert main(["--course", str(japanese), "list"]) == 0
    assert i18n.language() == "ja" and "Doubling 101: 0/1 完了" in capsys.readouterr().out
    assert main(["--course", str(japanese), "--lang", "en", "list"]) == 0
    assert i18n.language() == "en" and "0/1 done" in capsys.readouterr().out
    env.setenv("JAXLINGS_LANG", "en")
    assert main(["--course", str(japanese), "list"]) == 0 and i18n.language() == "en"
    env.delenv("JAXLINGS_LANG")
    assert main(["--course", str(plain), "list"]) == 0 and i18n.language() == "en"
    env.setenv("LANG", "ja_JP.UTF-8")  # a course that names no language leaves it to the locale
    assert main(["--course", str(plain), "list"]) == 0 and i18n.language() == "ja"
    capsys.readouterr()


def test_two_courses_sharing_a_workspace_keep_their_state_apart(tmp_path, env, capsys):
    first, second = make_course(tmp_path / "a"), make_course(tmp_path / "b")
    ws = tmp_path / "ws"
    env.setenv("JAXLINGS_WORKSPACE", str(ws))
    with pytest.raises(SystemExit) as done:  # a look (the saved language) claims nothing
        main(["--course", str(second), "--help"])
    assert done.value.code == 0
    capsys.readouterr()
    assert paths.state_dir_for(ws, second, claim=False) == ws.resolve() / ".jaxlings" and not ws.exists()
    assert main(["--course", str(first), "hint", "double"]) == 0
    assert main(["--course", str(first), "hint", "double"]) == 0
    assert main(["--course", str(second), "hint", "double"]) == 0
    capsys.readouterr()
    state_a, state_b = paths.state_dir_for(ws, first), paths.state_dir_for(ws, second)
    assert state_a == ws.resolve() / ".jaxlings"  # the first course to use the workspace owns its .jaxlings
    assert (ws / ".jaxlings" / "course").read_text().strip() == str(first.resolve())
    assert state_b == ws.resolve() / ".jaxlings" / "courses" / paths.course_key(second)
    read = lambda state: json.loads((state / "progress.json").read_text())["exercises"]["double"]  # noqa: E731
    assert read(state_a)["hints_seen"] == 2 and read(state_b)["hints_seen"] == 1
    from course.engine.server import server_dir

    assert server_dir(state_a) != server_dir(state_b)
    # A course's own folder used as another course's workspace stays the first course's.
    assert paths.state_dir_for(first, second) == first.resolve() / ".jaxlings" / "courses" / paths.course_key(second)
    assert paths.state_dir_for(first, first) == first.resolve() / ".jaxlings"


@pytest.mark.parametrize("breakage, needle", [
    (None, "is not a course: it has no lessons/course.toml"),
    ("format_version = 1\ntitle = [", "broken manifest"),
    ('format_version = 1\ntitle = "t"\nlanguage = "xx"\nlessons = []\n', "language 'xx' is not one of en, ja"),
])
def test_a_folder_that_is_not_a_course_is_one_clear_error(tmp_path, env, capsys, breakage, needle):
    folder = tmp_path / "nothing"
    folder.mkdir()
    if breakage is not None:
        (folder / "lessons").mkdir()
        (folder / "lessons" / "course.toml").write_text(breakage)
    for argv in (["--course", str(folder), "list"], ["check", "--course", str(folder)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    env.setenv("JAXLINGS_COURSE_ROOT", str(folder))
    assert main(["hint"]) == 2 and needle in capsys.readouterr().err


def test_a_learner_cannot_read_the_course_secrets_under_check(tmp_path, env, capsys):
    from course.engine.isolation import for_checks

    if not for_checks().sandboxed:
        pytest.skip(f"no sandbox here ({for_checks().tier}): the child can read the course's folders")
    root = make_course(tmp_path / "doubling")
    secrets = [root / "solutions" / "01_basics" / "double.py", root / "checks" / "test_double.py",
               root / "alternatives" / "double" / "by_addition.py", root / "attacks" / "double" / "near_triple.py"]
    # Right only when it reads one of them: the check fails exactly when all are out of reach.
    (root / "exercises" / "01_basics" / "double.py").write_text(f"""
def double(x):
    for path in {[str(p) for p in secrets]!r}:
        try:
            with open(path) as f:
                f.read()
            return x * 2
        except OSError:
            pass
    return x * 3
""")
    code, data = run_json(capsys, "--course", str(root), "check", "double", "--seed", "5")
    assert code == 1 and data["passed"] is False and data["cause"] != "check_error", data["message"]
    assert "double(x)" in data["message"]


def _grade(*argv: str, cwd: Path = REPO, timeout: float = 400) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINGS_")}
    return subprocess.run([sys.executable, "-m", "course", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_grade_with_course_grades_a_class_against_that_course(tmp_path):
    root = make_course(tmp_path / "doubling", title="Doubling 101")
    class_dir = tmp_path / "class"
    for learner, source in (("right", "def double(x):\n    return x + x\n"), ("wrong", "def double(x):\n    return x\n")):
        (class_dir / learner / "exercises" / "01_basics").mkdir(parents=True)
        (class_dir / learner / "exercises" / "01_basics" / "double.py").write_text(source)
    out = tmp_path / "out"
    proc = _grade("grade", str(class_dir), "--out", str(out), "--course", str(root), "--jobs", "2", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    subs = {s["id"]: s for s in report["submissions"]}
    assert set(subs) == {"right", "wrong"}
    assert subs["right"]["exercises"]["double"]["passed"] is True
    assert subs["wrong"]["exercises"]["double"]["passed"] is False
    run = json.loads((out / "run.json").read_text())
    assert run["course_title"] == "Doubling 101" and run["course_root"] == str(root.resolve())


def test_a_gradescope_bundle_built_with_course_carries_and_grades_that_course(tmp_path):
    root = make_course(tmp_path / "doubling")
    out = tmp_path / "bundle"
    proc = _grade("--course", str(root), "grade", "--bundle", "gradescope", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    with zipfile.ZipFile(out / "autograder.zip") as zf:
        names = set(zf.namelist())
        manifest = zf.read("lessons/course.toml").decode("utf-8")
    assert {"lessons/course.toml", "lessons/01_basics.md", "solutions/01_basics/double.py",
            "checks/test_double.py", "exercises/01_basics/double.py"} <= names
    assert manifest == (root / "lessons" / "course.toml").read_text()
    assert not any(n.startswith(("lessons/01_ecosystem", "solutions/01_ecosystem")) for n in names)
    assert not any(n.startswith(("alternatives/", "attacks/")) for n in names)

    doc = run_bundle(out / "autograder.zip", {"double.py": "def double(x):\n    return 2 * x\n"},
                     tmp_path / "autograder")
    assert [t["name"] for t in doc["tests"]] == ["double"]
    assert doc["tests"][0]["status"] == "passed" and doc["score"] == doc["max_score"] == 1.0


def test_a_github_classroom_kit_built_with_course_carries_that_course(tmp_path):
    root = make_course(tmp_path / "doubling")
    out = tmp_path / "kit"
    proc = _grade("grade", "--bundle", "github-classroom", "--out", str(out), "--course", str(root))
    assert proc.returncode == 0, proc.stderr[-3000:]
    kit = out / "grading-kit"
    assert (kit / "lessons" / "course.toml").read_text() == (root / "lessons" / "course.toml").read_text()
    assert (kit / "solutions" / "01_basics" / "double.py").read_text() == SOLVED
    assert (kit / "checks" / "test_double.py").read_text() == CHECK
    assert not (kit / "lessons" / "01_ecosystem.md").exists()
    workflow = (out / ".github" / "workflows" / "classroom.yml").read_text()
    assert "--exercises double" in workflow and "verdict double" in workflow


def test_a_course_s_alternatives_and_attacks_are_secrets_of_grading(tmp_path):
    from course.grader.batch import course_secrets

    root = make_course(tmp_path / "doubling")
    hidden = set(course_secrets(root))
    assert {root / "solutions", root / "checks", root / "alternatives", root / "attacks"} <= hidden

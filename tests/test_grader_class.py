"""Grading a synthetic class end to end through `jaxlings grade`, hostile learners included.

One grading run (module fixture) serves most tests: correct, alternative,
partial and empty submissions, and hostile ones that forge result files, exit
early, patch pytest, return always-equal objects, loop forever, bomb memory,
read the solutions and vandalise another submission. Each must get exactly the
grade it deserves. Where a defence depends on the isolation tier the machine
allows, the test asserts what the report says is in force.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from junitparser import JUnitXml

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "grader_fixtures"
COURSE = FIXTURES / "course"
EXTRA = FIXTURES / "extra_checks"
SOLUTIONS = COURSE / "solutions" / "01_basics"
SEED = 424242

ALT_ADD = """
def add(a, b):
    import numpy as np
    out = np.empty_like(np.asarray(a, dtype=np.result_type(a, b)))
    for i, (x, y) in enumerate(zip(np.ravel(a), np.ravel(b))):
        out.flat[i] = x + y
    return out
"""
ALT_SCALE = "import numpy as np\n\ndef scale(x, factor):\n    return np.multiply(factor, x)\n"
WRONG_SCALE = "def scale(x, factor):\n    return x + factor\n"
FORGER_ADD = """
import json, os
def add(a, b):
    forged = {{"score": 100, "passed": True, "total": 99}}
    for target in ("results.json", "report.json", "../results.json", "{out}/submissions/forger.json",
                   "{out}/report.json", "{out}/gradebook.csv"):
        try:
            with open(target, "w") as f:
                json.dump(forged, f)
        except OSError:
            pass
    return a - b
"""
FORGER_CONFTEST = """
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    outcome.get_result().outcome = "passed"
"""
EXIT_SCALE = "import os\n\ndef scale(x, factor):\n    os._exit(0)\n"
PATCHER_ADD = """
import sys
import numpy as np
try:
    import pytest
    pytest.approx = lambda *a, **k: a[0] if a else None
except ImportError:
    pass
import course.engine.checking
course.engine.checking.assert_close = lambda *a, **k: None
sys.modules["pytest"] = None
def add(a, b):
    return np.zeros_like(a)
"""
ALWAYS_EQUAL_SCALE = """
class Anything:
    def __eq__(self, other):
        return True
    __array_priority__ = 1000
def scale(x, factor):
    return Anything()
"""
LOOP_SCALE = "def scale(x, factor):\n    while True:\n        pass\n"
BOMB_ADD = "def add(a, b):\n    hog = bytearray(16 * 1024**3)\n    return a + b\n"
SNOOP_ADD = """
def add(a, b):
    namespace = {{}}
    exec(open("{solution}").read(), namespace)
    return namespace["add"](a, b)
"""
VANDAL_SCALE = """
import glob, os
def scale(x, factor):
    copies = "/tmp/jaxlings-sandboxes-*/grade-*/slot-*/copy-*/exercises/01_basics/scale.py"
    for target in ["{victim}"] + glob.glob(copies):
        try:
            with open(target, "w") as f:
                f.write("def scale(x, factor):\\n    return 0\\n")
        except OSError:
            pass
    return x * factor
"""


def _write(folder: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)


def make_class(class_dir: Path, out: Path) -> None:
    sol_add, sol_scale = (SOLUTIONS / "add.py").read_text(), (SOLUTIONS / "scale.py").read_text()
    ex = "exercises/01_basics/"
    _write(class_dir / "correct", {ex + "add.py": sol_add, ex + "scale.py": sol_scale})
    alt = class_dir / "_alt"
    _write(alt, {"hw1/" + ex + "add.py": ALT_ADD, "hw1/" + ex + "scale.py": ALT_SCALE})
    with zipfile.ZipFile(class_dir / "alternative.zip", "w") as zf:
        for f in sorted(alt.rglob("*.py")):
            zf.write(f, f.relative_to(alt).as_posix())
    for f in sorted(alt.rglob("*"), reverse=True):
        f.unlink() if f.is_file() else f.rmdir()
    alt.rmdir()
    _write(class_dir / "partial", {"add.py": sol_add, "scale.py": WRONG_SCALE})
    (class_dir / "empty").mkdir()
    _write(class_dir / "forger", {ex + "add.py": FORGER_ADD.format(out=out), ex + "scale.py": EXIT_SCALE,
                                  "conftest.py": FORGER_CONFTEST, ex + "conftest.py": FORGER_CONFTEST})
    _write(class_dir / "patcher", {ex + "add.py": PATCHER_ADD, ex + "scale.py": ALWAYS_EQUAL_SCALE})
    _write(class_dir / "looper", {ex + "add.py": sol_add, ex + "scale.py": LOOP_SCALE})
    _write(class_dir / "bomber", {ex + "add.py": BOMB_ADD, ex + "scale.py": sol_scale})
    victim = class_dir / "correct" / ex / "scale.py"
    _write(class_dir / "snoop", {ex + "add.py": SNOOP_ADD.format(solution=SOLUTIONS / "add.py"),
                                 ex + "scale.py": VANDAL_SCALE.format(victim=victim)})


def grade(*args: str, course: Path = COURSE, timeout: float = 400) -> subprocess.CompletedProcess:
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(course)}
    env.pop("JAXLINGS_SEED", None)
    return subprocess.run([sys.executable, "-m", "course", "grade", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("class")
    class_dir, out = base / "class", base / "out"
    class_dir.mkdir()
    make_class(class_dir, out)
    victim_before = (class_dir / "correct/exercises/01_basics/scale.py").read_text()
    proc = grade(str(class_dir), "--out", str(out), "--checks", str(EXTRA), "--jobs", "2",
                 "--seed", str(SEED), "--memory-mb", "2048", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    subs = {s["id"]: s for s in report["submissions"]}
    return dict(class_dir=class_dir, out=out, report=report, subs=subs, victim_before=victim_before)


def test_a_course_named_by_a_relative_path_is_graded(tmp_path):
    """JAXLINGS_COURSE_ROOT relative to where `grade` is started: its workers, which work in a
    folder of their own, still find the course."""
    class_dir, out = tmp_path / "class", tmp_path / "out"
    sol = (SOLUTIONS / "add.py").read_text(), (SOLUTIONS / "scale.py").read_text()
    _write(class_dir / "ann", {"exercises/01_basics/add.py": sol[0], "exercises/01_basics/scale.py": sol[1]})
    proc = grade(str(class_dir), "--out", str(out), "--quiet", course=COURSE.relative_to(ROOT))
    assert proc.returncode == 0, proc.stderr[-3000:]
    [sub] = json.loads((out / "report.json").read_text())["submissions"]
    assert sub["total"] == sub["max_total"] > 0, sub


def ex(graded, sub: str, name: str) -> dict:
    return graded["subs"][sub]["exercises"][name]


def test_every_submission_is_graded_and_honest_work_gets_full_marks(graded):
    assert sorted(graded["subs"]) == ["alternative", "bomber", "correct", "empty", "forger", "looper",
                                      "partial", "patcher", "snoop"]
    for sub in ("correct", "alternative"):
        assert graded["subs"][sub]["total"] == 3.0, graded["subs"][sub]
    checks = [c["name"] for c in ex(graded, "correct", "add")["checks"]]
    assert checks == ["test_adds_vectors", "test_adds_matrices", "test_add_integers::test_adds_integers"]
    alt = ex(graded, "alternative", "add")
    assert alt["file"] == "hw1/exercises/01_basics/add.py" and "expected" in alt["note"]


def test_partial_and_empty_get_what_they_earned(graded):
    assert ex(graded, "partial", "add")["points"] == 2.0
    assert ex(graded, "partial", "scale")["cause"] == "wrong_result"
    assert graded["subs"]["partial"]["total"] == 2.0
    empty = graded["subs"]["empty"]
    assert empty["status"] == "empty" and empty["total"] == 0.0
    assert {e["cause"] for e in empty["exercises"].values()} == {"not_submitted"}


def test_forged_files_and_a_planted_conftest_change_nothing(graded):
    assert ex(graded, "forger", "add")["cause"] == "wrong_result"
    assert ex(graded, "forger", "scale")["cause"] == "exit"
    assert graded["subs"]["forger"]["total"] == 0.0
    saved = json.loads((graded["out"] / "submissions" / "forger.json").read_text())
    assert saved["total"] == 0.0 and saved["id"] == "forger"


def test_patching_pytest_or_returning_always_equal_objects_fails(graded):
    assert ex(graded, "patcher", "add")["cause"] == "wrong_result"
    assert ex(graded, "patcher", "scale")["cause"] == "not_plain_data"
    assert graded["subs"]["patcher"]["total"] == 0.0


def test_infinite_loop_and_memory_bomb_are_stopped_with_their_cause(graded):
    assert ex(graded, "looper", "scale")["cause"] == "timeout"
    assert ex(graded, "looper", "add")["points"] == 2.0  # the loop costs only its own exercise
    assert ex(graded, "bomber", "add")["cause"] == "out_of_memory"
    assert ex(graded, "bomber", "scale")["points"] == 1.0


def test_isolation_in_force_is_reported_and_holds(graded):
    iso = graded["report"]["run"]["isolation"]
    assert iso["tier"] in ("bubblewrap", "unshare", "uid", "process")
    assert iso["order"] == ["bubblewrap", "unshare", "uid", "process"]
    snoop = ex(graded, "snoop", "add")
    if iso["guarantees"]["solutions_hidden"]:
        assert snoop["points"] == 0.0 and snoop["cause"] == "exception"
    else:
        assert iso["tier"] in ("uid", "process")  # the report owns up to the weaker tier
    if iso["guarantees"]["other_submissions_hidden"]:
        victim = graded["class_dir"] / "correct/exercises/01_basics/scale.py"
        assert victim.read_text() == graded["victim_before"]
        assert graded["subs"]["correct"]["total"] == 3.0


def test_reports_agree_with_each_other(graded):
    out = graded["out"]
    rows = (out / "gradebook.csv").read_text().splitlines()
    assert rows[0] == "submission,total,max,status,add,scale"
    assert "correct,3,3,graded,2,1" in rows and "partial,2,3,graded,2,0" in rows
    xml = JUnitXml.fromfile(str(out / "junit.xml"))
    suites = {s.name: s for s in xml}
    assert set(suites) == set(graded["subs"])
    assert suites["correct"].failures == 0 and suites["correct"].errors == 0 and suites["correct"].tests == 4
    assert suites["looper"].errors >= 1
    feedback = (out / "feedback" / "partial.txt").read_text()
    assert "Score: 2 / 3" in feedback
    assert "def test_" not in feedback and str(COURSE / "checks") not in feedback
    assert graded["report"]["run"]["seed"] == SEED
    assert graded["report"]["run"]["versions"]["jax"]


def test_resume_regrades_only_what_is_missing_and_gives_the_same_grades(graded):
    out = graded["out"]
    results = out / "submissions"
    kept = {p.name: p.stat().st_mtime_ns for p in results.glob("*.json") if p.stem not in ("partial", "looper")}
    (results / "partial.json").unlink()
    (results / "looper.json").unlink()
    proc = grade(str(graded["class_dir"]), "--out", str(out), "--checks", str(EXTRA), "--jobs", "2",
                 "--resume", "--memory-mb", "2048", "--quiet", "--exercises", "add,scale")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("*.json") if p.name in kept} == kept
    report = json.loads((out / "report.json").read_text())
    again = {s["id"]: s for s in report["submissions"]}
    for sub in ("partial", "looper"):
        assert again[sub]["total"] == graded["subs"][sub]["total"]
        for name, entry in again[sub]["exercises"].items():
            assert entry["seed"] == graded["subs"][sub]["exercises"][name]["seed"]
            assert entry["cause"] == graded["subs"][sub]["exercises"][name]["cause"]


def test_a_finished_out_dir_is_not_overwritten_without_resume(graded):
    proc = grade(str(graded["class_dir"]), "--out", str(graded["out"]), "--quiet")
    assert proc.returncode == 2 and "--resume" in proc.stderr and "Traceback" not in proc.stderr

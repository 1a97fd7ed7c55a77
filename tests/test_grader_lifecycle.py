"""A grading run's life: workers replaced as they grow, and stops that still leave every report.

Signals go to a real `jaxlings grade` process; the test waits for what the
grader prints (a line per graded submission when its stderr is not a
terminal), never for a length of time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from test_grader_class import COURSE, LOOP_SCALE, ROOT, SOLUTIONS, grade

EX = "exercises/01_basics/"


def _class(class_dir: Path, n: int, loopers: int = 0) -> None:
    for i in range(n):
        folder = class_dir / f"learner{i}" / EX
        folder.mkdir(parents=True)
        (folder / "add.py").write_text((SOLUTIONS / "add.py").read_text())
        scale = LOOP_SCALE if i >= n - loopers else (SOLUTIONS / "scale.py").read_text()
        (folder / "scale.py").write_text(scale)


def test_workers_are_replaced_after_n_submissions_and_grades_do_not_change(tmp_path):
    class_dir = tmp_path / "class"
    _class(class_dir, 3)
    pids = {}
    for name, extra in (("recycled", ["--worker-max-submissions", "1"]), ("kept", ["--worker-max-mb", "0"])):
        out = tmp_path / name
        proc = grade(str(class_dir), "--out", str(out), "--jobs", "1", "--seed", "3", "--quiet", *extra)
        assert proc.returncode == 0, proc.stderr[-3000:]
        report = json.loads((out / "report.json").read_text())
        assert [s["total"] for s in report["submissions"]] == [3.0, 3.0, 3.0]
        pids[name] = {s["worker"]["pid"] for s in report["submissions"]}
        assert report["run"]["workers_started"] == len(pids[name])
        for s in report["submissions"]:
            assert 0 < s["worker"]["peak_mb"] < 1536, s["worker"]
    assert len(pids["recycled"]) == 3 and len(pids["kept"]) == 1


def test_three_quick_interrupts_still_leave_every_report_and_no_work_folder(tmp_path):
    class_dir, out, tmp = tmp_path / "class", tmp_path / "out", tmp_path / "tmp"
    _class(class_dir, 4, loopers=3)  # the loopers keep the run busy after the first learner is graded
    tmp.mkdir()
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(COURSE), "TMPDIR": str(tmp)}
    env.pop("JAXLINGS_SEED", None)
    proc = subprocess.Popen([sys.executable, "-m", "course", "grade", str(class_dir), "--out", str(out),
                             "--jobs", "1", "--seed", "8"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    seen = []
    try:
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("graded 1/4"):
                break
        else:
            raise AssertionError("".join(seen)[-3000:])
        for _ in range(3):
            proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=120) == 130, rest[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in rest, rest[-3000:]
    report = json.loads((out / "report.json").read_text())
    graded = [s["id"] for s in report["submissions"]]
    # Every learner has a row with a status, graded or not (only the finished ones were listed before).
    assert graded == [f"learner{i}" for i in range(4)] and report["run"]["finished"] is None
    status = {s["id"]: s["status"] for s in report["submissions"]}
    assert status["learner0"] == "graded" and status["learner3"] == "not_graded", status
    assert (out / "gradebook.csv").read_text().count("\n") == len(graded) + 1
    assert "not_graded" in (out / "gradebook.csv").read_text()
    ET.parse(out / "junit.xml")
    assert sorted(p.stem for p in (out / "feedback").iterdir()) == sorted(graded)
    assert not [p.name for p in tmp.iterdir() if p.name.startswith("jaxlings-grade-")]
    assert "--resume" in rest


def test_sigterm_from_a_scheduler_stops_cleanly_too(tmp_path):
    class_dir, out = tmp_path / "class", tmp_path / "out"
    _class(class_dir, 2, loopers=1)
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(COURSE)}
    env.pop("JAXLINGS_SEED", None)
    proc = subprocess.Popen([sys.executable, "-m", "course", "grade", str(class_dir), "--out", str(out),
                             "--jobs", "1"], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:
            if line.startswith("graded 1/2"):
                break
        proc.send_signal(signal.SIGTERM)
        proc.stderr.read()
        assert proc.wait(timeout=120) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    report = json.loads((out / "report.json").read_text())
    assert [(s["id"], s["status"]) for s in report["submissions"]][0] == ("learner0", "graded")
    assert [s["id"] for s in report["submissions"]] == ["learner0", "learner1"]
    assert not (out / "submissions" / "learner1.json").exists()  # --resume grades it


def test_children_started_one_at_a_time_grade_the_same(tmp_path, monkeypatch):
    """Gradescope's small containers grade without a second child starting ahead."""
    from course.grader.batch import Options
    from course.grader.batch import grade as grade_in_process

    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(COURSE))
    class_dir = tmp_path / "class"
    _class(class_dir, 1)
    (class_dir / "learner0" / EX / "scale.py").write_text("def scale(x, factor):\n    return x + factor\n")
    outcome = grade_in_process(Options(class_dir=class_dir, out_dir=tmp_path / "out", jobs=1, seed=4, quiet=True,
                                       prestart=False))
    sub = outcome.submissions[0]
    assert (sub["exercises"]["add"]["points"], sub["exercises"]["scale"]["cause"]) == (2.0, "wrong_result")


def test_a_worker_drops_compiled_programs_once_it_grows_not_after_every_exercise():
    """Past the threshold a worker drops what its checks compiled; it drops again only once it
    has grown by FORGET_STEP_MB past what it kept, since what it keeps is not what it compiled.
    A small container (threshold 0) drops after every exercise."""
    from course.grader.worker import FORGET_STEP_MB, Forgetting

    held = [700.0]
    drops = []

    def forget():
        drops.append(held[0])
        held[0] = max(held[0] - 40, 790)  # what a drop gives back; 790 MiB is the worker itself

    f = Forgetting(768)
    for grown in (30, 30, 30, 20, 10, 30, 30, 30, 30):  # MiB each exercise compiles
        held[0] += grown
        f.after_exercise(lambda: held[0], forget)
    assert drops == [790.0, 910.0] and 910.0 > 790.0 + FORGET_STEP_MB  # not at 810, 820, 850 or 880
    assert held[0] < 1024  # far from the pool's recycling threshold

    small = Forgetting(0)
    assert all(small.after_exercise(lambda: 300.0, lambda: None) for _ in range(3))

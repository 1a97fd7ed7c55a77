"""Gradescope: results.json from inside the autograder layout, and the autograder zip."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import zipfile

from gradescope_run import run_bundle
from test_grader_class import COURSE, EXTRA, SOLUTIONS, WRONG_SCALE, grade


def test_gradescope_mode_writes_results_json_under_the_weakest_isolation(tmp_path, monkeypatch):
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))  # where the run's own reports go without --out
    submission = tmp_path / "autograder" / "submission"
    submission.mkdir(parents=True)
    (submission / "add.py").write_text((SOLUTIONS / "add.py").read_text())
    (submission / "scale.py").write_text(WRONG_SCALE)
    results = tmp_path / "autograder" / "results" / "results.json"
    proc = grade("--gradescope", "--submission", str(submission), "--results", str(results),
                 "--isolation", "process", "--i-understand", "--partial", "--visibility", "after_due_date",
                 "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(results.read_text())
    assert doc["score"] == 2.0 and doc["max_score"] == 3.0
    assert doc["visibility"] == "after_due_date"
    by_name = {t["name"]: t for t in doc["tests"]}
    assert by_name["add: test_adds_vectors"]["status"] == "passed"
    scale = by_name["scale: test_scales"]
    assert scale["status"] == "failed" and scale["score"] == 0 and scale["max_score"] == 1.0
    assert "wrong result" in scale["output"] and "def test_" not in scale["output"]
    assert all(set(t) >= {"name", "score", "max_score", "status", "output", "visibility"} for t in doc["tests"])
    assert not list(temp.glob("jaxlings-gradescope-*")), "the run's reports outlived it"


def test_bundle_holds_what_gradescope_runs(tmp_path):
    points = tmp_path / "points.toml"
    points.write_text("[exercises]\nadd = 3\n")
    proc = grade("--bundle", "gradescope", "--out", str(tmp_path), "--checks", str(EXTRA),
                 "--points", str(points), "--exercises", "add")
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        names = set(zf.namelist())
        assert {"setup.sh", "run_autograder", "lessons/course.toml", "solutions/01_basics/add.py",
                "checks/test_add.py", "points.toml", "instructor_checks/0/test_add_integers.py"} <= names
        assert not any("__pycache__" in n for n in names)
        for script in ("setup.sh", "run_autograder"):
            assert (zf.getinfo(script).external_attr >> 16) & stat.S_IXUSR
        run = zf.read("run_autograder").decode()
        assert "grade --gradescope" in run and "--exercises add" in run and "/autograder/source/points.toml" in run


def test_the_bundled_run_autograder_grades_a_submission(tmp_path):
    """Unpack the zip as Gradescope does and run its run_autograder, with the
    image's fixed paths (/autograder, /opt/jaxlings) moved under tmp_path: the
    bundled package, manifest, checks and baked options must grade on their own."""
    points = tmp_path / "points.toml"
    points.write_text("[exercises]\nadd = 3\n")
    proc = grade("--bundle", "gradescope", "--out", str(tmp_path), "--checks", str(EXTRA),
                 "--points", str(points), "--partial")
    assert proc.returncode == 0, proc.stderr
    doc = run_bundle(tmp_path / "autograder.zip", {"add.py": (SOLUTIONS / "add.py").read_text(),
                                                   "scale.py": WRONG_SCALE}, tmp_path / "autograder")
    by_name = {t["name"]: t for t in doc["tests"]}
    assert by_name["add: test_adds_vectors"]["status"] == "passed"
    assert by_name["scale: test_scales"]["status"] == "failed"
    assert any(name.startswith("add: test_add_integers") for name in by_name), sorted(by_name)
    assert doc["max_score"] == 4.0 and 0 < doc["score"] < doc["max_score"]


def test_bad_input_is_a_clear_message_not_a_traceback(tmp_path):
    for args, needle in [
        ((str(tmp_path / "missing"), "--out", str(tmp_path / "o")), "not a folder"),
        ((str(tmp_path), "--out", str(tmp_path / "o"), "--exercises", "nope"), "unknown exercise"),
        ((str(tmp_path), "--out", str(tmp_path / "o")), "no submissions"),
        ((str(tmp_path), "--out", str(tmp_path / "o"), "--checks", str(COURSE)), "no test_<exercise>"),
    ]:
        proc = grade(*args)
        assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_the_bundle_locks_solutions_and_checks_away_from_other_users(tmp_path):
    proc = grade("--bundle", "gradescope", "--out", str(tmp_path), "--checks", str(EXTRA))
    assert proc.returncode == 0, proc.stderr
    source = tmp_path / "source"
    with zipfile.ZipFile(tmp_path / "autograder.zip") as zf:
        zf.extractall(source)
        run = zf.read("run_autograder").decode()
        assert "bash /autograder/source/lockdown.sh" in zf.read("setup.sh").decode()
    assert "--submission-timeout 2100" in run  # inside Gradescope's 40-minute maximum
    for p in source.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)  # as unpacked with a permissive umask
    done = subprocess.run(["bash", str(source / "lockdown.sh"), str(source)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    secret = [source / "solutions/01_basics/add.py", source / "checks/test_add.py",
              source / "instructor_checks/0/test_add_integers.py", source / "solutions"]
    for p in secret:
        assert p.stat().st_mode & 0o077 == 0, p
    assert (source / "course/engine/child.py").stat().st_mode & 0o004  # the child still imports the engine
    if os.geteuid() == 0:  # read as an unprivileged user, as graded code runs
        peek = subprocess.run(["setpriv", "--reuid=61999", "--regid=61999", "--clear-groups", "cat",
                               str(source / "solutions/01_basics/add.py")], capture_output=True, text=True)
        assert peek.returncode != 0 and "def add" not in peek.stdout


def test_partial_scores_add_up_to_the_maximum_exactly():
    """A platform sums the tests' scores as floats: ten checks of 0.1 point gave 0.9999999999999999."""
    from fractions import Fraction

    from course.grader.gradescope import results_json
    from course.grader.results import finish

    checks = [dict(name=f"test_{i}", outcome="passed", points=float(Fraction(1, 10)), max_points=float(Fraction(1, 10)),
                   points_exact="1/10", message="", cause=None, duration=0.0) for i in range(10)]
    thirds = [dict(name=f"test_third_{i}", outcome="passed", points=float(Fraction(7, 3)),
                   max_points=float(Fraction(7, 3)), points_exact="7/3", message="", cause=None, duration=0.0)
              for i in range(3)]
    entries = {name: dict(exercise=name, passed=True, points=top, points_exact=str(int(top)), max_points=top,
                          cause=None, message="", seed=1, duration=0.0, file=None, note=None, checks=c, output="")
               for name, top, c in (("tenths", 1.0, checks), ("thirds", 7.0, thirds))}
    sub = finish(dict(id="s", status="graded", exercises=entries, duration=0.0), {"tenths": 1.0, "thirds": 7.0})
    doc = json.loads(results_json(sub, [], partial=True))
    scores, tops = 0.0, 0.0
    for test in doc["tests"]:
        scores += test["score"]
        tops += test["max_score"]
    assert doc["max_score"] == 8.0 and tops == 8.0 and scores == doc["score"] == 8.0
    tenths = 0.0
    for test in doc["tests"][:10]:
        tenths += test["max_score"]
    assert tenths == 1.0  # each exercise's own tests too
    assert all(abs(t["max_score"] - (0.1 if "third" not in t["name"] else 7 / 3)) < 1e-9 for t in doc["tests"])


def test_a_container_too_small_is_refused_before_grading_with_results_that_say_so(tmp_path, monkeypatch, capsys):
    """On Gradescope's default 768 MB the learner's children were capped so low that the reference
    solutions scored 0, each test blaming the learner's code. Now nothing is graded, and
    results.json says why, addressed to the instructor."""
    import argparse

    from course.grader import cli, gradescope

    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "add.py").write_text((SOLUTIONS / "add.py").read_text())
    results = tmp_path / "results" / "results.json"
    monkeypatch.setattr(gradescope, "container_memory_mb", lambda: 768)
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    args = parser.parse_args(["--gradescope", "--submission", str(submission), "--results", str(results),
                              "--out", str(tmp_path / "out"), "--quiet"])
    assert cli.run(args) == 2
    assert "too small (768 MB; needs" in capsys.readouterr().err
    doc = json.loads(results.read_text())
    assert doc["output"].startswith(f"Not graded: the autograder container is too small (768 MB; needs "
                                    f"{gradescope.NEEDED_MB} MB)")
    assert doc["tests"] == [] and doc["score"] == 0
    assert not (tmp_path / "out" / "submissions").exists()


def test_a_lone_submission_is_split_over_the_workers_where_the_container_holds_them(tmp_path, monkeypatch):
    """Gradescope and GitHub Classroom grade one submission: where the container's memory allows
    (no limit, as on GitHub's runners, or SPLIT_MB), its exercises are shared among the workers;
    in a smaller container one worker grades them all. The score is the same."""
    import argparse

    from course.grader import cli, gradescope

    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(COURSE))
    submission = tmp_path / "submission"
    submission.mkdir()
    (submission / "add.py").write_text((SOLUTIONS / "add.py").read_text())
    (submission / "scale.py").write_text(WRONG_SCALE)
    scores = {}
    for limit in (None, gradescope.SPLIT_MB - 1):
        monkeypatch.setattr(gradescope, "container_memory_mb", lambda limit=limit: limit)
        out, results = tmp_path / f"out-{limit}", tmp_path / f"results-{limit}" / "results.json"
        parser = argparse.ArgumentParser()
        cli.add_arguments(parser)
        args = parser.parse_args(["--gradescope", "--submission", str(submission), "--results", str(results),
                                  "--out", str(out), "--jobs", "2", "--quiet"])
        assert cli.run(args) == 0
        report = json.loads((out / "report.json").read_text())
        [sub] = report["submissions"]
        assert report["run"]["workers_started"] == (2 if limit is None else 1)
        assert sub["worker"].get("parts") == (2 if limit is None else None)
        scores[limit] = json.loads(results.read_text())["score"]
    assert scores[None] == scores[gradescope.SPLIT_MB - 1] == 2.0

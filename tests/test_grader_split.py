"""A lone submission graded over several workers (course.grader.pool.split and join): the same
grade as on one worker, recorded once and whole, and a part lost to a dead worker costs only
its own exercises."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from course.grader.pool import Pool, _Slot, join, split
from course.grader.reports import junit_xml

from test_grader_class import SOLUTIONS, WRONG_SCALE, _write, grade

EX = "exercises/01_basics/"


def _graded(tmp_path: Path, name: str, jobs: int, files: dict[str, str]) -> dict:
    class_dir, out = tmp_path / f"class-{name}-{jobs}", tmp_path / f"out-{name}-{jobs}"
    _write(class_dir / name, files)
    proc = grade(str(class_dir), "--out", str(out), "--jobs", str(jobs), "--seed", "77", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [sub] = json.loads((out / "report.json").read_text())["submissions"]
    return sub


def _verdicts(sub: dict) -> dict:
    return {name: (e["points"], e["cause"], e["seed"], [(c["name"], c["outcome"]) for c in e["checks"]])
            for name, e in sub["exercises"].items()}


def test_a_lone_submission_is_split_over_the_workers_and_graded_as_on_one(tmp_path):
    files = {EX + "add.py": (SOLUTIONS / "add.py").read_text(), EX + "scale.py": WRONG_SCALE}
    one = _graded(tmp_path, "lone", 1, files)
    two = _graded(tmp_path, "lone", 2, files)
    assert "parts" not in one["worker"]
    assert two["worker"]["parts"] == 2 and 1 <= len(two["worker"]["pids"]) <= 2  # either worker may take either part
    assert "pid" not in two["worker"]  # one of its workers' pids, as if that one had graded it
    assert list(two["exercises"]) == list(one["exercises"]) == ["add", "scale"]  # course order
    assert _verdicts(two) == _verdicts(one)
    assert (two["total"], two["total_exact"], two["max_total"]) == (one["total"], one["total_exact"],
                                                                    one["max_total"])
    assert 0 < two["total"] < two["max_total"]  # add passed, scale did not
    assert two["exercises"]["scale"]["cause"] == "wrong_result"
    assert two["status"] == "graded" and two["notes"] == one["notes"]


def test_a_split_empty_hand_in_is_empty_once(tmp_path):
    sub = _graded(tmp_path, "nothing", 2, {"README.txt": "no code here\n"})
    assert sub["status"] == "empty" and sub["total"] == 0.0
    assert len(sub["notes"]) == 1, sub["notes"]  # each part wrote the same note: kept once
    assert {e["cause"] for e in sub["exercises"].values()} == {"not_submitted"}


def test_split_deals_exercises_only_when_workers_would_sit_idle():
    names = ["a", "b", "c"]
    one = [{"id": "s1"}]
    assert split(one, 1, names) == one
    parts = split(one, 2, names)
    assert [p["exercises"] for p in parts] == [["a"], ["b"], ["c"]]
    assert [p["part"] for p in parts] == [[0, 3], [1, 3], [2, 3]] and all(p["id"] == "s1" for p in parts)
    assert split(one, 2, ["a"]) == one
    three = [{"id": "s1"}, {"id": "s2"}, {"id": "s3"}]
    assert split(three, 4, names) == three
    assert [(p["id"], p["exercises"]) for p in split(three[:2], 4, ["a", "b"])] == [
        ("s1", ["a"]), ("s1", ["b"]), ("s2", ["a"]), ("s2", ["b"])]


def _pool() -> Pool:
    exercises = [{"name": n, "file": f"{n}.py", "max_points": 1.0} for n in ("a", "b", "c")]
    pool = Pool({"scheme": {"exercise_points": {}, "check_weights": {}, "partial": False},
                 "exercises": exercises, "run_seed": 5}, 2, 60, lambda msg: None)
    pool._parts, pool._began = {}, {}
    return pool


def _entry(name: str, points: float) -> dict:
    return {"name": name, "points": points, "max_points": 1.0, "passed": points == 1.0, "cause": None,
            "checks": [], "duration": 1.0}


def test_a_submission_is_recorded_once_every_part_is_in_and_a_lost_part_costs_its_own_exercises():
    pool = _pool()
    recorded = []
    job = {"id": "s1", "source": "/x/s1", "fingerprint": "f"}
    first, second, third = split([job], 2, ["a", "b", "c"])
    for part, name in ((third, "c"), (first, "a")):  # in the order they finish
        done = {"id": "s1", "source": "s1", "fingerprint": "f", "status": "graded", "notes": ["n"],
                "exercises": {name: _entry(name, 1.0)}, "duration": 4.0, "total": 1.0, "max_total": 1.0,
                "worker": {"pid": 11, "submissions": 1, "rss_mb": 700.0, "peak_mb": 800.0,
                           "children": {"forked": 2, "fresh": 0}}}
        assert pool._settle(part, done, recorded.append) == 0 and recorded == []
    # The second part's worker died: its exercise is recorded with the reason, the first part's stand.
    lost = pool._salvage(second, {}, "grader_error", "the grading worker stopped", 9.0)
    assert list(lost["exercises"]) == ["b"] and lost["max_total"] == 1.0
    assert pool._settle(second, lost, recorded.append) == 1
    [sub] = recorded
    assert list(sub["exercises"]) == ["a", "b", "c"]
    assert sub["exercises"]["b"]["cause"] == "grader_error"
    assert (sub["total"], sub["max_total"]) == (2.0, 3.0)
    assert sub["notes"] == ["n", "the grading worker stopped"]
    assert pool._parts == {}


def test_join_keeps_one_worker_entry_with_every_part_in_it():
    parts = [{"id": "s", "source": "s", "fingerprint": "f", "status": "graded", "notes": [], "duration": d,
              "exercises": {n: _entry(n, 0.5)}, "worker": {"pid": pid, "submissions": 1, "rss_mb": rss,
                                                          "peak_mb": rss + 1, "children": {"forked": 3, "fresh": 1}}}
             for n, d, pid, rss in (("b", 2.0, 7, 600.0), ("a", 5.0, 8, 650.0))]
    exercises = [{"name": "a", "max_points": 1.0}, {"name": "b", "max_points": 1.0}]
    sub = join(parts, exercises)
    assert list(sub["exercises"]) == ["a", "b"] and sub["total"] == 1.0
    assert sub["worker"]["parts"] == 2 and sub["worker"]["pids"] == [7, 8]
    assert "pid" not in sub["worker"] and "submissions" not in sub["worker"]  # no one worker graded it
    assert sub["worker"]["rss_mb"] == 650.0 and sub["worker"]["children"] == {"forked": 6, "fresh": 2}


def test_a_split_submission_keeps_one_time_limit():
    """Each part runs on the submission's clock: once it has run past its limit, a part not
    started yet is recorded as timed out, not given a limit of its own."""
    pool = _pool()
    job = {"id": "s1", "source": "/x/s1", "fingerprint": "f"}
    first, second, third = split([job], 2, ["a", "b", "c"])
    assert not pool._overdue(first)
    pool._began["s1"] = time.monotonic() - 61  # its first part started 61 s ago; the limit is 60 s
    assert pool._overdue(second) and pool._overdue(third)
    assert not pool._overdue(job)  # a whole submission's clock starts when it is handed out
    late = pool._salvage(second, {}, "timeout", pool._timeout_message(), pool._since(second))
    assert late["exercises"]["b"]["cause"] == "timeout" and "60 s" in late["exercises"]["b"]["message"]


def _done(name: str, pid: int) -> dict:
    return {"id": "s1", "source": "s1", "fingerprint": "f", "status": "graded", "notes": [],
            "exercises": {name: _entry(name, 1.0)}, "duration": 1.0, "total": 1.0, "max_total": 1.0,
            "worker": {"pid": pid, "submissions": 1, "rss_mb": 700.0, "peak_mb": 800.0}}


def test_a_part_lost_with_its_worker_names_that_worker_among_the_pids():
    pool = _pool()
    recorded = []
    first, second, third = split([{"id": "s1", "source": "/x/s1", "fingerprint": "f"}], 2, ["a", "b", "c"])
    assert pool._settle(first, _done("a", 11), recorded.append) == 0
    assert pool._settle(third, _done("c", 12), recorded.append) == 0
    doomed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    try:
        slot = _Slot(1, doomed, ready=True, job=second, started=time.monotonic())
        pool.slots = [slot]
        pool._spawn = lambda index: _Slot(index, doomed)  # no fresh worker: nothing is left to grade
        assert pool._replace(slot, recorded.append, "grader_error", "the grading worker stopped") == 1
    finally:
        doomed.kill()
        doomed.wait()
    [sub] = recorded
    assert sub["exercises"]["b"]["cause"] == "grader_error"
    assert sub["worker"]["pids"] == [11, 12, doomed.pid] and sub["worker"]["parts"] == 3


def test_the_junit_time_of_a_split_submission_is_its_own_not_the_sum_of_its_parts():
    """Its parts ran side by side: 3 s of checks in a submission that took 2 s."""
    parts = [_done(n, pid) for n, pid in (("a", 11), ("b", 12), ("c", 11))]
    sub = join(parts, [{"name": n, "max_points": 1.0} for n in ("a", "b", "c")])
    sub["duration"] = 2.0  # what the pool sets: from its first part's start to its last part's end
    suite = junit_xml([sub], [])
    assert 'testsuite name="s1" tests="3" failures="0" errors="0" time="2.000"' in suite, suite

"""Smoke test on the real course: a solution passes, the untouched starter does not."""

from __future__ import annotations

import json
import shutil

import pytest

from course.catalog import load_catalog
from test_grader_class import ROOT, grade

EXERCISE = "immutable_updates"


def test_real_exercise_solution_passes_and_starter_fails(tmp_path):
    catalog = load_catalog(ROOT)
    if EXERCISE not in catalog:
        pytest.skip(f"the course has no {EXERCISE} exercise")
    exercise = catalog.exercise(EXERCISE)
    if not (exercise.solution_path().is_file() and exercise.check_path().is_file()):
        pytest.skip(f"{EXERCISE} has no solution or check yet")
    for who, source in (("solved", exercise.solution_path()), ("starter", ROOT / "exercises" / exercise.file)):
        target = tmp_path / "class" / who / "exercises" / exercise.file
        target.parent.mkdir(parents=True)
        shutil.copyfile(source, target)
    proc = grade(str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--exercises", EXERCISE,
                 "--jobs", "2", "--quiet", course=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    subs = {s["id"]: s for s in json.loads((tmp_path / "out" / "report.json").read_text())["submissions"]}
    assert subs["solved"]["exercises"][EXERCISE]["passed"], subs["solved"]["exercises"][EXERCISE]["message"]
    assert not subs["starter"]["exercises"][EXERCISE]["passed"]
    assert subs["starter"]["total"] == 0

"""`jaxlings grade` on the real course: a solution passes, the untouched starter does not,
and cheats and near misses of the real exercises get nothing."""

from __future__ import annotations

import json
import shutil

import pytest

from course.catalog import load_catalog
from course.engine.isolation import IsolationError, SANDBOX_TIERS, choose
from test_attacks import ATTACKS, _snapshot, unnamed_mistake
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


# One real-course case per kind of attack on a check, graded as a class: each
# probe-rigging cheat, delegation to the reference, frame walking and near misses. The same
# files fail `jaxlings check` in test_attacks.py; here they go through `jaxlings grade`.
GRADED_CASES = (
    "loss_and_grads/patch_mean",                 # a summed loss hidden by a patched jnp.mean
    "train_titanic/patch_numpy_mean",            # np.mean patched to report 0.95, no training
    "scan_epoch/patch_make_jaxpr",               # an unrolled loop made to look small
    "scan_epoch/decoy_scan_when_traced",         # a do-nothing scan lowered, a Python loop run
    "linen_train_state/grafted_lower",           # a plain function given `.lower`
    "jit_train_step/hide_retrace",               # the trace records edited from a frame
    "shuffle/patch_key_reuse_off",               # jax.debug_key_reuse turned off
    "timing/made_up",                            # timings made up without reading a clock
    "checkpoint_roundtrip/memory_restore",       # "restored" from memory, not from path
    "functional_ops/delegate_solutions",         # the reference read from the course
    "mlp_nnx/frame_walk",                        # the check's expected values read from a frame
    "optax_schedule/near_adamw",                 # a plausible mistake
)


def test_real_course_cheats_and_near_misses_get_nothing_under_grade(tmp_path):
    try:
        choose("auto", allow_weak=False, grading=True)
    except IsolationError as exc:
        pytest.skip(f"no sandbox for grading here: {exc}")
    catalog = load_catalog(ROOT)
    class_dir = tmp_path / "class"
    names = sorted({case.split("/")[0] for case in GRADED_CASES})
    for i, case in enumerate(GRADED_CASES):
        name, stem = case.split("/")
        target = class_dir / f"case{i:02d}" / "exercises" / catalog.exercise(name).file
        target.parent.mkdir(parents=True)
        shutil.copyfile(ATTACKS / name / f"{stem}.py", target)
    for name in names:  # the reference of every exercise graded, as one honest submission
        target = class_dir / "honest" / "exercises" / catalog.exercise(name).file
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(catalog.exercise(name).solution_path(), target)
    before = _snapshot()
    proc = grade(str(class_dir), "--out", str(tmp_path / "out"), "--exercises", ",".join(names),
                 "--jobs", "2", "--quiet", course=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["run"]["isolation"]["tier"] in SANDBOX_TIERS, report["run"]["isolation"]
    subs = {s["id"]: s for s in report["submissions"]}
    honest = subs["honest"]["exercises"]
    assert [n for n in names if not honest[n]["passed"]] == [], {n: honest[n]["message"] for n in names}
    assert sorted(subs) == sorted(["honest", *(f"case{i:02d}" for i in range(len(GRADED_CASES)))])
    for i, case in enumerate(GRADED_CASES):
        name, stem = case.split("/")
        sub = subs[f"case{i:02d}"]
        got = sub["exercises"][name]
        assert not got["passed"] and got["points"] == 0, f"{case} scored under grade: {got}"
        assert sub["total"] == 0, (case, sub["total"])
        assert got["cause"] not in ("check_error", "grader_error", "not_submitted"), (case, got["cause"],
                                                                                       got["message"])
        missing = unnamed_mistake(ATTACKS / name / f"{stem}.py",
                                  [got["message"], *(c["message"] for c in got["checks"] if c["outcome"] != "passed")])
        assert missing is None, (case, missing, got["message"])
    assert _snapshot() == before, "grading the cheats changed the course's files"

"""Under `jaxlings grade`, a learner's program that would crash or stall the process running
the checks costs that learner's check and nothing else in the class run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_grader_class import COURSE, FIXTURES, SEED, grade

PROGRAM_CHECKS = FIXTURES / "program_checks"
HONEST = "def add(a, b):\n    return a + b\n"
# Passes MLIR's verifier; XLA's conversion of it recursed until SIGSEGV in a grading worker.
CRASHER = '''
import jax._src.stages as stages

RECURSIVE = """module @jit_add {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = func.call @f(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @f(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = func.call @f(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
stages.Lowered.as_text = lambda self, *a, **k: RECURSIVE


def add(a, b):
    return a + b
'''


def test_a_program_that_crashes_xla_fails_one_check_and_the_class_is_graded(tmp_path: Path):
    class_dir, out = tmp_path / "class", tmp_path / "out"
    ex = "exercises/01_basics/"
    scale = (COURSE / "solutions/01_basics/scale.py").read_text()
    for learner, add in (("ann", HONEST), ("crasher", CRASHER), ("zoe", HONEST)):
        (class_dir / learner / ex).mkdir(parents=True)
        (class_dir / learner / ex / "add.py").write_text(add)
        (class_dir / learner / ex / "scale.py").write_text(scale)
    proc = grade(str(class_dir), "--out", str(out), "--checks", str(PROGRAM_CHECKS), "--jobs", "1",
                 "--seed", str(SEED), "--memory-mb", "2048", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    subs = {s["id"]: s for s in json.loads((out / "report.json").read_text())["submissions"]}
    for learner in ("ann", "zoe"):  # before and after the crasher, in the same worker
        checks = {c["name"]: c for c in subs[learner]["exercises"]["add"]["checks"]}
        assert "test_add_lowered::test_add_lowered" in checks
        assert all(c["outcome"] == "passed" for c in checks.values()), checks
    crashed = {c["name"]: c for c in subs["crasher"]["exercises"]["add"]["checks"]}
    lowered = crashed["test_add_lowered::test_add_lowered"]
    assert lowered["outcome"] != "passed" and "calls itself" in lowered["message"], lowered
    others = [c for name, c in crashed.items() if name != "test_add_lowered::test_add_lowered"]
    assert others and all(c["outcome"] == "passed" for c in others), others
    assert subs["crasher"]["exercises"]["scale"]["points"] == subs["ann"]["exercises"]["scale"]["points"] > 0


# 4,000 chained products: lowered in a second, minutes for XLA to compile.
COMPILE_BOMB = """
def add(a, b):
    import jax.numpy as jnp
    m = jnp.eye(4, dtype=a.dtype)
    for _ in range(4000):
        a = a @ m
    return a + b
"""
# 120 results of 4,000,000 float32: 1.9 GB from a program that does almost nothing.
HUGE_RESULTS = """
def add(a, b):
    import jax.numpy as jnp
    return [jnp.broadcast_to(a[0] + i, (4_000_000,)) for i in range(120)]
"""


def test_a_hostile_program_costs_its_check_no_more_than_the_exercises_time_limit(tmp_path: Path):
    from course.catalog import load_catalog
    from course.engine.settings import time_budget

    limit = time_budget(load_catalog(COURSE).exercise("add"), PROGRAM_CHECKS / "test_add_lowered.py")
    class_dir, out = tmp_path / "class", tmp_path / "out"
    ex = "exercises/01_basics/"
    scale = (COURSE / "solutions/01_basics/scale.py").read_text()
    for learner, add in (("bomb", COMPILE_BOMB), ("huge", HUGE_RESULTS), ("zoe", HONEST)):
        (class_dir / learner / ex).mkdir(parents=True)
        (class_dir / learner / ex / "add.py").write_text(add)
        (class_dir / learner / ex / "scale.py").write_text(scale)
    proc = grade(str(class_dir), "--out", str(out), "--checks", str(PROGRAM_CHECKS), "--jobs", "1",
                 "--seed", str(SEED), "--memory-mb", "2048", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    subs = {s["id"]: s for s in json.loads((out / "report.json").read_text())["submissions"]}
    lowered = {learner: {c["name"]: c for c in subs[learner]["exercises"]["add"]["checks"]}[
        "test_add_lowered::test_add_lowered"] for learner in subs}
    assert lowered["zoe"]["outcome"] == "passed", lowered["zoe"]
    bomb, huge = lowered["bomb"], lowered["huge"]
    assert bomb["outcome"] == "failed" and (
        f"used up the {limit:g} s the check gives to reading and running them" in bomb["message"]
        or "to compile it" in bomb["message"]), bomb
    assert huge["outcome"] == "failed" and "returns 1831 MiB of results, more than the 64 MiB" in huge["message"], huge
    # Generous bounds: the limit, and what ending and starting an evaluator take under load.
    assert bomb["duration"] < 2 * limit, bomb
    assert huge["duration"] < limit, huge

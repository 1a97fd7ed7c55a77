"""GitHub Classroom: the workflow parses, holds what Classroom runs, and its commands grade a repository.

The Actions-only steps (checkouts, setup-python, pip installs) cannot run
here; the test does what they do (the kit is put where the checkout puts it)
and runs every shell command and every command-grader command of the workflow
as written, against a learner's repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from test_grader_class import EXTRA, SOLUTIONS, WRONG_SCALE, grade

GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"


def _steps(out: Path) -> list[dict]:
    doc = yaml.safe_load((out / ".github/workflows/classroom.yml").read_text())
    job = doc["jobs"]["run-autograding-tests"]
    assert doc["permissions"]["checks"] == "write" and job["runs-on"] == "ubuntu-latest"
    return job["steps"]


def test_the_workflow_reports_each_exercise_through_classroom_actions(tmp_path):
    proc = grade("--bundle", "github-classroom", "--out", str(tmp_path), "--checks", str(EXTRA),
                 "--kit-repo", "teacher/jaxlings-kit")
    assert proc.returncode == 0, proc.stderr
    steps = _steps(tmp_path)
    graders = [s for s in steps if s.get("uses") == GRADER]
    assert [(s["id"], s["with"]["max-score"]) for s in graders] == [("add", 2), ("scale", 1)]
    reporter = next(s for s in steps if s.get("uses") == REPORTER)
    assert reporter["with"]["runners"] == "add,scale"
    assert reporter["env"] == {"ADD_RESULTS": "${{steps.add.outputs.result}}",
                               "SCALE_RESULTS": "${{steps.scale.outputs.result}}"}
    fetch = next(s for s in steps if s.get("with", {}).get("repository"))
    assert fetch["with"]["repository"] == "teacher/jaxlings-kit"
    assert fetch["with"]["token"] == "${{ secrets.JAXLINGS_KIT_TOKEN }}"
    kit = tmp_path / "grading-kit"
    assert (kit / "solutions/01_basics/add.py").is_file() and (kit / "checks/test_add.py").is_file()
    assert (kit / "instructor_checks/0/test_add_integers.py").is_file()
    assert not (tmp_path / ".github" / "solutions").exists()


def test_the_workflow_commands_grade_a_learner_repository(tmp_path):
    out = tmp_path / "bundle"
    proc = grade("--bundle", "github-classroom", "--out", str(out), "--checks", str(EXTRA))
    assert proc.returncode == 0, proc.stderr
    repo, runner_temp = tmp_path / "repo", tmp_path / "runner"
    runner_temp.mkdir()
    (repo / "exercises/01_basics").mkdir(parents=True)
    (repo / "exercises/01_basics/add.py").write_text((SOLUTIONS / "add.py").read_text())
    (repo / "exercises/01_basics/scale.py").write_text(WRONG_SCALE)
    steps = _steps(out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINGS_")}
    env.update(RUNNER_TEMP=str(runner_temp), PATH=f"{Path(sys.executable).parent}:{env['PATH']}")
    verdicts = {}
    for step in steps:
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout") and "with" in step:
            shutil.copytree(out / "grading-kit", repo / step["with"]["path"])  # what the checkout does
        elif "run" in step and "pip install" not in step["run"]:
            done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True,
                                  text=True, timeout=600)
            assert done.returncode == 0, (step["name"], done.stderr[-3000:])
        elif uses == GRADER:
            done = subprocess.run(["bash", "-c", step["with"]["command"]], cwd=repo, env=env,
                                  capture_output=True, text=True, timeout=120)
            verdicts[step["id"]] = (done.returncode, done.stdout)
    assert verdicts["add"][0] == 0 and "add: passed" in verdicts["add"][1]
    assert verdicts["scale"][0] != 0 and "scale: failed (0.0/1.0)" in verdicts["scale"][1]
    assert "jaxlings check scale" in verdicts["scale"][1]
    assert "def test_" not in verdicts["scale"][1]
    # The learner's repository never held the kit when graded: it sits outside the workspace.
    assert sorted(p.name for p in repo.iterdir()) == ["exercises"]
    assert (runner_temp / "jaxlings-kit" / "solutions").is_dir()


def test_partial_credit_is_refused_for_classroom(tmp_path):
    proc = grade("--bundle", "github-classroom", "--out", str(tmp_path), "--partial")
    assert proc.returncode == 2 and "all of its points or none" in proc.stderr

"""GitHub Classroom: the workflow parses, holds what Classroom runs, and its commands grade a repository.

The Actions-only steps (checkouts, setup-python, pip installs) cannot run
here; the test does what they do (the kit is put where the checkout puts it)
and runs every shell command and every command-grader command of the workflow
as written, against a learner's repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from test_grader_class import EXTRA, SOLUTIONS, WRONG_SCALE, grade

GRADER = "classroom-resources/autograding-command-grader@v1"
# What that action gives its command (runner.js): these variables and no others.
GRADER_ENV = ("PATH", "HOME")
GRADER_FIXED = {"FORCE_COLOR": "true", "DOTNET_CLI_HOME": "/tmp", "DOTNET_NOLOGO": "true"}
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
    # The token is not left in .git/config, where later steps could read it.
    assert all(s["with"]["persist-credentials"] is False for s in steps if s.get("uses", "").startswith("actions/checkout"))
    # No weak isolation in the bundle: a sandbox, set up with sudo, or the run fails.
    grade_step = next(s for s in steps if "grade --gradescope" in s.get("run", ""))
    assert "--i-understand" not in grade_step["run"] and "|| true" not in grade_step["run"]
    assert any("apparmor_restrict_unprivileged_userns=0" in s.get("run", "") for s in steps)
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
    # A learner commits results of their own, every test passed: never read.
    forged = {"tests": [{"name": n, "status": "passed", "score": 9, "max_score": 9} for n in ("add", "scale")]}
    (repo / "jaxlings-results.json").write_text(json.dumps(forged))
    steps = _steps(out)
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINGS_")}
    env.update(RUNNER_TEMP=str(runner_temp), PATH=f"{Path(sys.executable).parent}:{env['PATH']}")
    grader_env = {**{k: env[k] for k in GRADER_ENV if k in env}, **GRADER_FIXED}
    verdicts = {}
    for step in steps:
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout") and "repository" in step.get("with", {}):
            shutil.copytree(out / "grading-kit", repo / step["with"]["path"])  # what the checkout does
        elif "run" in step and "pip install" not in step["run"] and "sudo " not in step["run"]:
            done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=repo, env=env, capture_output=True,
                                  text=True, timeout=600)
            assert done.returncode == 0, (step["name"], done.stderr[-3000:])
        elif uses == GRADER:
            command = step["with"]["command"].replace("${{ runner.temp }}", str(runner_temp))  # as Actions does
            assert "${{" not in command
            done = subprocess.run(["bash", "-c", command], cwd=repo, env=grader_env,
                                  capture_output=True, text=True, timeout=120)
            verdicts[step["id"]] = (done.returncode, done.stdout)
    assert verdicts["add"][0] == 0 and "add: passed" in verdicts["add"][1]
    assert verdicts["scale"][0] != 0 and "scale: failed (0.0/1.0)" in verdicts["scale"][1]
    assert "jaxlings check scale" in verdicts["scale"][1]
    assert "def test_" not in verdicts["scale"][1]
    # The learner's repository never held the kit when graded: it sits outside the workspace.
    assert sorted(p.name for p in repo.iterdir()) == ["exercises", "jaxlings-results.json"]
    assert (runner_temp / "jaxlings-kit" / "solutions").is_dir()


def test_partial_credit_is_refused_for_classroom(tmp_path):
    proc = grade("--bundle", "github-classroom", "--out", str(tmp_path), "--partial")
    assert proc.returncode == 2 and "all of its points or none" in proc.stderr


def test_points_are_whole_because_the_command_grader_reads_them_with_parseint(tmp_path):
    points = tmp_path / "points.toml"
    points.write_text("[exercises]\nadd = 0.5\n")
    proc = grade("--bundle", "github-classroom", "--out", str(tmp_path / "out"), "--points", str(points))
    assert proc.returncode == 2 and "whole points" in proc.stderr, proc.stderr
    assert not (tmp_path / "out" / "grading-kit").exists()


def test_the_verdict_never_reads_results_from_the_repository(tmp_path):
    from course.grader.classroom import main

    (tmp_path / "jaxlings-results.json").write_text(json.dumps({"tests": [{"name": "add", "status": "passed"}]}))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(["verdict", "add", "jaxlings-results.json"]) == 1
        assert main(["verdict", "add", str(tmp_path / "jaxlings-results.json")]) == 1
        assert main(["verdict", "add"]) == 2
    finally:
        os.chdir(cwd)


def test_the_grading_step_fails_the_run_where_no_sandbox_starts(tmp_path):
    """Root in a namespace that maps root alone: no sandbox tier can start. The step that grades
    must fail (the run shows an error), not write a results file that gives the learner 0."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "--user", "--map-root-user", "true"]).returncode:
        import pytest

        pytest.skip("cannot make a user namespace here")
    out = tmp_path / "bundle"
    assert grade("--bundle", "github-classroom", "--out", str(out)).returncode == 0
    runner_temp, repo = tmp_path / "runner", tmp_path / "repo"
    shutil.copytree(out / "grading-kit", runner_temp / "jaxlings-kit")
    (repo / "exercises/01_basics").mkdir(parents=True)
    (repo / "exercises/01_basics/add.py").write_text((SOLUTIONS / "add.py").read_text())
    step = next(s for s in _steps(out) if "grade --gradescope" in s.get("run", ""))
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINGS_")}
    env.update(RUNNER_TEMP=str(runner_temp), PATH=f"{Path(sys.executable).parent}:{env['PATH']}")
    done = subprocess.run(["unshare", "--user", "--map-root-user", "bash", "-e", "-c", step["run"]], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode != 0 and "no sandbox works here" in done.stderr, done.stderr[-3000:]
    assert not (runner_temp / "jaxlings-results.json").exists()

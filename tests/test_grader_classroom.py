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


# What the test sets for the workflow's `pip install` steps, which GitHub runs online: pip
# resolves against what is installed and installs nothing (this interpreter is shared).
OFFLINE_PIP = {"PIP_DRY_RUN": "1", "PIP_NO_INDEX": "1", "PIP_NO_BUILD_ISOLATION": "0",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def _run_workflow(out: Path, learner: dict[str, str], base: Path) -> tuple[dict, Path, Path]:
    """Run the workflow's steps in order, as GitHub runs them as far as that can be done offline:
    the checkouts put the kit and the learner's files where actions/checkout puts them; every `run`
    step but the sudo one runs with `bash -e` in the workspace with GitHub's RUNNER_TEMP and
    GITHUB_WORKSPACE; each command-grader command runs as that action runs it. Returns each
    exercise's (exit status, output), the workspace and RUNNER_TEMP."""
    workspace, runner_temp = base / "work" / "repo", base / "runner-temp"
    workspace.mkdir(parents=True)
    runner_temp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JAXLINGS_", "PIP_"))}
    env.update(RUNNER_TEMP=str(runner_temp), GITHUB_WORKSPACE=str(workspace),
               PATH=f"{Path(sys.executable).parent}:{env['PATH']}")
    grader_env = {**{k: env[k] for k in GRADER_ENV if k in env}, **GRADER_FIXED}
    verdicts = {}
    for step in _steps(out):
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout") and "repository" in step.get("with", {}):
            shutil.copytree(out / "grading-kit", workspace / step["with"]["path"])
        elif uses.startswith("actions/checkout"):
            assert not any(workspace.iterdir()), "the learner's files come into a workspace holding nothing else"
            for rel, text in learner.items():
                (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
                (workspace / rel).write_text(text)
        elif "run" in step and "sudo " not in step["run"]:
            step_env = {**env, **OFFLINE_PIP} if "pip install" in step["run"] else env
            done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=workspace, env=step_env,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, (step["name"], done.stderr[-3000:])
        elif uses == GRADER:
            command = step["with"]["command"].replace("${{ runner.temp }}", str(runner_temp))  # as Actions does
            assert "${{" not in command
            done = subprocess.run(["bash", "-c", command], cwd=workspace, env=grader_env,
                                  capture_output=True, text=True, timeout=120)
            verdicts[step["id"]] = (done.returncode, done.stdout)
    return verdicts, workspace, runner_temp


def _learner_repository() -> dict[str, str]:
    return {"exercises/01_basics/add.py": (SOLUTIONS / "add.py").read_text(),
            "exercises/01_basics/scale.py": WRONG_SCALE}


def test_the_workflow_commands_grade_a_learner_repository(tmp_path):
    out = tmp_path / "bundle"
    proc = grade("--bundle", "github-classroom", "--out", str(out), "--checks", str(EXTRA))
    assert proc.returncode == 0, proc.stderr
    learner = _learner_repository()
    # A learner commits results of their own, every test passed: never read.
    forged = {"tests": [{"name": n, "status": "passed", "score": 9, "max_score": 9} for n in ("add", "scale")]}
    learner["jaxlings-results.json"] = json.dumps(forged)
    verdicts, repo, runner_temp = _run_workflow(out, learner, tmp_path)
    assert verdicts["add"][0] == 0 and "add: passed" in verdicts["add"][1]
    assert verdicts["scale"][0] != 0 and "scale: failed (0.0/1.0)" in verdicts["scale"][1]
    assert "jaxlings check scale" in verdicts["scale"][1]
    assert "def test_" not in verdicts["scale"][1]
    # The learner's repository never held the kit when graded: it sits outside the workspace.
    assert sorted(p.name for p in repo.iterdir()) == ["exercises", "jaxlings-results.json"]
    assert (runner_temp / "jaxlings-kit" / "solutions").is_dir()


# Each writes a file named after itself into MARKERS if it ever runs where it can.
PLANTED = ("pip.py", "sitecustomize.py", "usercustomize.py", "setup.py", "build_backend.py", "json.py",
           "course/__init__.py", "course/__main__.py", "course/grader/__init__.py", "course/grader/classroom.py")


def test_no_file_of_the_learners_repository_runs_outside_the_sandbox(tmp_path):
    """A learner's repository with a pip.py, sitecustomize.py, setup.py, pyproject.toml, .pth
    files and a `course/` package of its own: none of them runs in any step (the install steps,
    the grading step, the command grader's commands), and the repository is still graded."""
    out = tmp_path / "bundle"
    assert grade("--bundle", "github-classroom", "--out", str(out)).returncode == 0
    markers = tmp_path / "markers"
    markers.mkdir()

    def marker(name: str) -> str:
        return (f"import os\ntry:\n    open(os.path.join({str(markers)!r}, {name!r}), 'w').close()\n"
                f"except OSError:\n    pass\n")

    learner = _learner_repository()
    learner.update({name: marker(name.replace("/", ".")) for name in PLANTED})
    learner["pyproject.toml"] = ('[build-system]\nrequires = []\nbuild-backend = "build_backend"\n'
                                 'backend-path = ["."]\n[project]\nname = "course"\nversion = "1"\n')
    for name in ("planted.pth", "course/planted.pth"):  # a .pth file's `import` line runs where it is read
        learner[name] = f"import os; open(os.path.join({str(markers)!r}, {name.replace('/', '.')!r}), 'w').close()\n"
    verdicts, repo, runner_temp = _run_workflow(out, learner, tmp_path)
    assert sorted(p.name for p in markers.iterdir()) == []
    assert verdicts["add"][0] == 0 and "add: passed" in verdicts["add"][1], verdicts
    assert verdicts["scale"][0] != 0 and "scale: failed (0.0/1.0)" in verdicts["scale"][1], verdicts
    assert (runner_temp / "jaxlings-results.json").is_file()
    # The planted files would have written their marker, had they run: each can.
    done = subprocess.run([sys.executable, "-c", "import sitecustomize, pip, json, course.grader.classroom"],
                          cwd=repo, env={**os.environ, "PYTHONPATH": str(repo)}, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert {"sitecustomize.py", "pip.py", "json.py", "course.__init__.py", "course.grader.classroom.py"} <= {
        p.name for p in markers.iterdir()}


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
    env.update(RUNNER_TEMP=str(runner_temp), GITHUB_WORKSPACE=str(repo),
               PATH=f"{Path(sys.executable).parent}:{env['PATH']}")
    done = subprocess.run(["unshare", "--user", "--map-root-user", "bash", "-e", "-c", step["run"]], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode != 0 and "no sandbox works here" in done.stderr, done.stderr[-3000:]
    assert not (runner_temp / "jaxlings-results.json").exists()

"""`jaxlings grade --bundle github-classroom`: grading in each learner's repository on GitHub Actions.

Writes, under --out:

- `.github/workflows/classroom.yml`, for the assignment's template repository.
  On every push it fetches the grading kit from a private repository, grades
  the repository with `jaxlings grade --gradescope` (one submission: the
  repository itself), then reports each exercise through one
  `autograding-command-grader` step (its points when the exercise passed,
  else 0) and GitHub Classroom's grading reporter.
- `grading-kit/`: what the private repository must hold (the package, the
  course with its solutions and hidden checks, the pins, the instructor's
  checks and points). The learner's repository never contains it: it is
  checked out at run time, outside the workspace, with a read-only token.

Each command-grader step runs `python -I -m course.grader.classroom verdict NAME
RESULTS`, which exits 0 exactly when NAME passed in the graded results, and
prints the learner's feedback for it. The command grader runs it with PATH and
HOME alone (no RUNNER_TEMP), in the learner's repository: RESULTS is therefore
an absolute path the workflow writes in (`${{ runner.temp }}`, filled in by
Actions), and a results file inside the repository is never read.

Nothing of the learner's repository runs outside the sandbox: the kit is fetched and moved
out before the learner's files are checked out, every step's commands start in
`$RUNNER_TEMP`, and every Python runs with `-I` (no folder of the learner's on sys.path, no
PYTHON* variables), so a committed `pip.py`, `sitecustomize.py`, `.pth` file or `course/`
package is never imported, and the learner's `setup.py` or `pyproject.toml` is never built.

The runner is not root and Ubuntu 24.04 restricts user namespaces through
AppArmor: the workflow installs bubblewrap and lifts that restriction for the
job (hosted runners have passwordless sudo). Graded code then runs in a
sandbox, or the grading step fails the run: no learner gets a grade from a
run where their code could read the kit.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

from course.grader.bundle import BundleError, kit_files

KIT_DIR = "jaxlings-kit"  # under $RUNNER_TEMP: outside the workspace, so never copied for graded code
RESULTS = "jaxlings-results.json"
COMMAND_GRADER = "classroom-resources/autograding-command-grader@v1"
REPORTER = "classroom-resources/autograding-grading-reporter@v1"
TORCH_CPU = "https://download.pytorch.org/whl/cpu"


def _q(value: str) -> str:
    """A YAML scalar: JSON strings are valid YAML, quoted and escaped."""
    return json.dumps(value)


def workflow(exercises: list[tuple[str, float]], grade_options: list[str], kit_repo: str | None) -> str:
    repo = kit_repo or "${{ vars.JAXLINGS_KIT_REPO }}"
    grade = ("JAXLINGS_COURSE_ROOT=\"$RUNNER_TEMP/" + KIT_DIR + "\" python -I -m course grade --gradescope "
             "--submission \"$GITHUB_WORKSPACE\" --results \"$RUNNER_TEMP/" + RESULTS + "\" --out \"$RUNNER_TEMP/jaxlings-out\" "
             + " ".join(_shell(o) for o in grade_options))
    lines = [
        "# Written by `jaxlings grade --bundle github-classroom`. Grades this repository on every push.",
        "name: Autograding Tests",
        "on: [push, workflow_dispatch, repository_dispatch]",
        "permissions:",
        "  checks: write",
        "  actions: read",
        "  contents: read",
        "jobs:",
        "  run-autograding-tests:",
        "    runs-on: ubuntu-latest",
        "    if: github.actor != 'github-classroom[bot]'",
        "    timeout-minutes: 60",
        "    steps:",
        # The kit first, into a workspace that holds nothing yet: no file of the learner's can be
        # in its way, and it is out of the workspace before the learner's files come in.
        "      - name: Fetch the grading kit (a private repository)",
        "        uses: actions/checkout@v4",
        "        with:",
        f"          repository: {_q(repo)}",
        "          token: ${{ secrets.JAXLINGS_KIT_TOKEN }}",
        f"          path: {KIT_DIR}",
        "          persist-credentials: false",  # the token is not left in the kit's .git/config
        "      - name: Move the kit out of the workspace",
        f"        run: mv {KIT_DIR} \"$RUNNER_TEMP/{KIT_DIR}\"",
        "      - name: Check out the submission",
        "        uses: actions/checkout@v4",
        "        with:",
        "          persist-credentials: false",
        "      - uses: actions/setup-python@v5",
        "        with:",
        "          python-version: \"3.11\"",
        # Every command below starts outside the learner's checkout and runs Python with -I:
        # `python -m pip` in the checkout would run a committed pip.py with the runner's rights.
        "      - name: Allow the sandbox for graded code (bubblewrap, user namespaces)",
        "        run: |",
        "          cd \"$RUNNER_TEMP\"",
        "          sudo apt-get install -y -q bubblewrap",
        "          if [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]; then",
        "            sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
        "          fi",
        "      - name: Install the grader",
        "        run: |",
        "          cd \"$RUNNER_TEMP\"",
        f"          python -I -m pip install -q --index-url {TORCH_CPU} torch==2.13.0",
        f"          python -I -m pip install -q -c \"$RUNNER_TEMP/{KIT_DIR}/constraints.txt\" \"$RUNNER_TEMP/{KIT_DIR}\"",
        "      - name: Grade every exercise",
        "        run: |",
        "          cd \"$RUNNER_TEMP\"",
        f"          {grade}",
    ]
    for name, points in exercises:
        lines += [
            f"      - name: {_q(name)}",
            f"        id: {name}",
            f"        uses: {COMMAND_GRADER}",
            "        with:",
            f"          test-name: {_q(name)}",
            f"          command: {_q(verdict_command(name))}",
            "          timeout: 1",
            f"          max-score: {_points(points)}",
        ]
    lines += [
        "      - name: Autograding Reporter",
        f"        uses: {REPORTER}",
        "        env:",
        *[f"          {name.upper()}_RESULTS: \"${{{{steps.{name}.outputs.result}}}}\"" for name, _ in exercises],
        "        with:",
        f"          runners: {','.join(name for name, _ in exercises)}",
    ]
    return "\n".join(lines) + "\n"


def verdict_command(name: str) -> str:
    # ${{ runner.temp }} is filled in by Actions before the step runs: an absolute path
    # outside the learner's repository, which the command grader's environment lacks.
    return f"python -I -m course.grader.classroom verdict {name} \"${{{{ runner.temp }}}}/{RESULTS}\""


def _points(x: float) -> str:
    # The command grader reads max-score with parseInt: 0.5 would be 0, 2.5 would be 2.
    if not float(x).is_integer():
        raise BundleError(f"GitHub Classroom counts whole points only (max-score {x} would be read as "
                          f"{int(x)}): give every exercise whole points in the points file")
    return str(int(x))


def _shell(word: str) -> str:
    """A shell word; kit paths keep $RUNNER_TEMP expandable (they hold nothing else to expand)."""
    import shlex

    return f'"{word}"' if word.startswith("$RUNNER_TEMP/") else shlex.quote(word)


def write_classroom(out_dir: Path, *, exercises: list[str] | None, checks_dirs: list[Path],
                    points_file: Path | None, kit_repo: str | None) -> tuple[Path, Path]:
    from course.catalog import load_catalog
    from course.grader.scoring import PointsError, load_scheme

    catalog = load_catalog()
    chosen = [e for e in catalog.exercises if not exercises or e.name in exercises]
    unknown = sorted(set(exercises or []) - {e.name for e in chosen})
    if unknown:
        raise BundleError(f"unknown exercise(s): {', '.join(unknown)}")
    try:
        scheme = load_scheme(points_file, partial=False, known={e.name for e in catalog.exercises})
    except PointsError as exc:
        raise BundleError(str(exc)) from None
    if scheme.partial:
        raise BundleError("GitHub Classroom's command grader gives all of a step's points or none: "
                          "partial credit ([checks] weights) cannot be reported; drop them for this bundle")
    files, options = kit_files(exercises=[e.name for e in chosen], checks_dirs=checks_dirs,
                               points_file=points_file, partial=False, root_prefix=f"$RUNNER_TEMP/{KIT_DIR}",
                               weak_isolation=False)
    points = [(e.name, scheme.points_for(e.name, e.points or 1)) for e in chosen]
    text = workflow(points, options, kit_repo)  # before anything is written: whole points are checked here
    kit = out_dir / "grading-kit"
    if kit.exists():
        shutil.rmtree(kit)
    for path, arc in files:
        (kit / arc).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, kit / arc)
    target = out_dir / ".github" / "workflows" / "classroom.yml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target, kit


def verdict(name: str, results: Path) -> int:
    """Exit 0 when exercise `name` passed in results.json; print its feedback either way."""
    from course.grader import safe

    try:
        doc = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"{name}: not graded (no readable results: {exc})")
        return 1
    test = next((t for t in doc.get("tests", []) if t.get("name") == name), None)
    if test is None:
        print(f"{name}: not graded")
        return 1
    print(safe.text(f"{name}: {test.get('status')} ({test.get('score')}/{test.get('max_score')})"))
    if test.get("output"):
        print(safe.text(test["output"]))
    return 0 if test.get("status") == "passed" else 1


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "verdict":
        results = Path(argv[2])
        # Never from the workspace: the learner's repository could hold a results file of its own.
        workspace = [Path(p).resolve() for p in (os.getcwd(), os.environ.get("GITHUB_WORKSPACE")) if p]
        if not results.is_absolute() or any(_within(results.resolve(), w) for w in workspace):
            print(f"{argv[1]}: not graded (the results must be an absolute path outside the repository, "
                  f"not {argv[2]!r})")
            return 1
        return verdict(argv[1], results)
    print("usage: python -I -m course.grader.classroom verdict EXERCISE /ABSOLUTE/RESULTS.json", file=sys.stderr)
    return 2


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

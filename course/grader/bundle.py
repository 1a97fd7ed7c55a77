"""`jaxlings grade --bundle gradescope`: the autograder zip for Gradescope.

Gradescope builds an image from the zip once (setup.sh, as root) and runs
`run_autograder` in a fresh container per submission, so a course grades on
Gradescope's machines however many learners hand in. The zip carries the
course (package with checks, manifest, solutions), the pinned constraints,
and the instructor's extra checks and points file; the grading options chosen
here are baked into run_autograder.
"""

from __future__ import annotations

import shlex
import stat
import zipfile
from pathlib import Path

from course import paths
from course.grader.gradescope import SUBMISSION_BUDGET_S

_COURSE_PARTS = ("lessons", "solutions", "exercises", "starters", "checks")  # from the course root
_TOP_FILES = ("pyproject.toml", "constraints.txt", "README.md", "LICENSE")
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".jaxlings", "grader_fixtures"}

SETUP_SH = """#!/usr/bin/env bash
# Runs once, as root, when Gradescope builds the autograder image.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# bubblewrap fences off each learner child; where the container forbids it the
# grader falls back to the next isolation tier and says so in its report.
apt-get install -y -q python3 python3-venv python3-pip bubblewrap
if python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    python3 -I -m venv /opt/jaxlings
else
    # The course needs Python 3.11+; older base images get a managed one.
    python3 -I -m pip install -q uv
    python3 -I -m uv venv --python 3.11 --seed /opt/jaxlings
fi
/opt/jaxlings/bin/python -I -m pip install -q --upgrade pip
# The CPU build of torch, from PyTorch's own index (PyPI's Linux wheel is the
# multi-GB CUDA one); its dependencies are re-pinned by the next line.
/opt/jaxlings/bin/python -I -m pip install -q --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
/opt/jaxlings/bin/python -I -m pip install -q -c /autograder/source/constraints.txt -e /autograder/source
# Compile and warm the caches once, at build time, not on every submission.
JAXLINGS_COURSE_ROOT=/autograder/source /opt/jaxlings/bin/python -I -c 'import jax, flax, optax, pytest'
bash /autograder/source/lockdown.sh /autograder/source
"""

# Gradescope runs run_autograder as root and the learner's code in the same
# container. The grader runs graded code as another, unprivileged user (the
# uid, unshare or bubblewrap tier); this makes sure that user cannot read what
# decides the grade, whatever the isolation tier hides on top.
LOCKDOWN_SH = """#!/usr/bin/env bash
# Usage: lockdown.sh SOURCE_DIR. Solutions, checks, the instructor's checks and
# points readable by their owner (root) alone; the rest of the course stays
# readable, since a learner's child imports the course's engine.
set -euo pipefail
src="${1:?give the autograder source folder}"
chown -R root:root "$src" 2>/dev/null || true
chmod -R go-w "$src"
for secret in solutions checks course/checks instructor_checks points.toml lockdown.sh; do
    if [ -e "$src/$secret" ]; then
        chmod -R go-rwx "$src/$secret"
    fi
done
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Runs per submission: grades /autograder/submission, writes /autograder/results/results.json.
set -uo pipefail
export JAXLINGS_COURSE_ROOT=/autograder/source
# -I: Python imports from its own installation only, never from the folder it starts in.
cd /autograder/source
exec /opt/jaxlings/bin/python -I -m course grade --gradescope \\
    --submission /autograder/submission --results /autograder/results/results.json {options}
"""


class BundleError(Exception):
    """The bundle cannot be made; the message says why."""


def kit_files(*, exercises: list[str] | None, checks_dirs: list[Path], points_file: Path | None,
              partial: bool, root_prefix: str, weak_isolation: bool = True) -> tuple[list[tuple[Path, str]], list[str]]:
    """What grading needs (package, course content, pins, instructor's checks and points) as
    (file, name in the kit), and the `jaxlings grade` options that point at them under `root_prefix`."""
    # The package and its pins come from this install; the course content from
    # the course root, which may be a course of its own (JAXLINGS_COURSE_ROOT).
    project, root = paths.PACKAGE_DIR.parent, paths.course_root()
    missing = [str(root / p) for p in ("lessons/course.toml", "solutions") if not (root / p).exists()]
    missing += [str(project / p) for p in ("pyproject.toml", "constraints.txt") if not (project / p).is_file()]
    if missing:
        raise BundleError(f"cannot bundle: missing {', '.join(missing)}")
    files: list[tuple[Path, str]] = list(_tree(paths.PACKAGE_DIR, "course"))
    for part in _COURSE_PARTS:
        if (root / part).is_dir():
            files += _tree(root / part, part)
    files += [(project / name, name) for name in _TOP_FILES if (project / name).is_file()]
    # Gradescope's containers often forbid user namespaces, so no sandbox may start there:
    # the grader then runs learner code as another uid, and its report says which. Where a
    # sandbox can be had (GitHub's runners, with sudo), the bundle asks for one or fails.
    options: list[str] = ["--i-understand"] if weak_isolation else []
    if exercises:
        options += ["--exercises", ",".join(exercises)]
    if partial:
        options.append("--partial")
    for i, d in enumerate(checks_dirs):
        arc = f"instructor_checks/{i}"
        files += [(f, f"{arc}/{f.name}") for f in sorted(d.glob("*.py"))]
        options += ["--checks", f"{root_prefix}/{arc}"]
    if points_file is not None:
        files.append((points_file, "points.toml"))
        options += ["--points", f"{root_prefix}/points.toml"]
    return files, options


def write_bundle(out_dir: Path, *, exercises: list[str] | None, checks_dirs: list[Path],
                 points_file: Path | None, partial: bool, visibility: str) -> Path:
    files, kit_options = kit_files(exercises=exercises, checks_dirs=checks_dirs, points_file=points_file,
                                   partial=partial, root_prefix="/autograder/source")
    # Within Gradescope's 40-minute maximum, with time to write results.json.
    options = ["--visibility", visibility, "--submission-timeout", str(SUBMISSION_BUDGET_S), *kit_options]
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "autograder.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        _add_text(zf, "setup.sh", SETUP_SH, executable=True)
        _add_text(zf, "lockdown.sh", LOCKDOWN_SH, executable=True)
        for path, arc in files:
            zf.write(path, arc)
        _add_text(zf, "run_autograder", RUN_AUTOGRADER.format(options=shlex.join(options)), executable=True)
    return target


def _tree(folder: Path, arc: str) -> list[tuple[Path, str]]:
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in _SKIP_DIRS for part in rel.parts) or path.is_symlink() or not path.is_file():
            continue
        if path.suffix in (".pyc", ".pyo"):
            continue
        out.append((path, f"{arc}/{rel.as_posix()}"))
    return out


def _add_text(zf: zipfile.ZipFile, name: str, text: str, *, executable: bool) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = ((stat.S_IFREG | (0o755 if executable else 0o644)) << 16)
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, text)

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

_COURSE_PARTS = ("lessons", "solutions", "exercises", "checks")  # from the course root
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
    python3 -m venv /opt/jaxlings
else
    # The course needs Python 3.11+; older base images get a managed one.
    python3 -m pip install -q uv
    python3 -m uv venv --python 3.11 --seed /opt/jaxlings
fi
/opt/jaxlings/bin/python -m pip install -q --upgrade pip
# The CPU build of torch, from PyTorch's own index (PyPI's Linux wheel is the
# multi-GB CUDA one); its dependencies are re-pinned by the next line.
/opt/jaxlings/bin/python -m pip install -q --index-url https://download.pytorch.org/whl/cpu torch==2.13.0
/opt/jaxlings/bin/python -m pip install -q -c /autograder/source/constraints.txt -e /autograder/source
# Compile and warm the caches once, at build time, not on every submission.
JAXLINGS_COURSE_ROOT=/autograder/source /opt/jaxlings/bin/python -c 'import jax, flax, optax, pytest'
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Runs per submission: grades /autograder/submission, writes /autograder/results/results.json.
set -uo pipefail
export JAXLINGS_COURSE_ROOT=/autograder/source
cd /autograder/source
exec /opt/jaxlings/bin/python -m course grade --gradescope \\
    --submission /autograder/submission --results /autograder/results/results.json {options}
"""


class BundleError(Exception):
    """The bundle cannot be made; the message says why."""


def write_bundle(out_dir: Path, *, exercises: list[str] | None, checks_dirs: list[Path],
                 points_file: Path | None, partial: bool, visibility: str) -> Path:
    # The package and its pins come from this install; the course content from
    # the course root, which may be a course of its own (JAXLINGS_COURSE_ROOT).
    project, root = paths.PACKAGE_DIR.parent, paths.course_root()
    missing = [str(root / p) for p in ("lessons/course.toml", "solutions") if not (root / p).exists()]
    missing += [str(project / p) for p in ("pyproject.toml", "constraints.txt") if not (project / p).is_file()]
    if missing:
        raise BundleError(f"cannot bundle: missing {', '.join(missing)}")
    # Gradescope's containers usually forbid user namespaces, so no sandbox starts
    # there: the grader then runs learner code as another uid, and its report says so.
    options: list[str] = ["--visibility", visibility, "--i-understand"]
    if exercises:
        options += ["--exercises", ",".join(exercises)]
    if partial:
        options.append("--partial")
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "autograder.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        _add_text(zf, "setup.sh", SETUP_SH, executable=True)
        _add_tree(zf, paths.PACKAGE_DIR, "course")
        for part in _COURSE_PARTS:
            if (root / part).is_dir():
                _add_tree(zf, root / part, part)
        for name in _TOP_FILES:
            if (project / name).is_file():
                zf.write(project / name, name)
        for i, d in enumerate(checks_dirs):
            arc = f"instructor_checks/{i}"
            for f in sorted(d.glob("*.py")):
                zf.write(f, f"{arc}/{f.name}")
            options += ["--checks", f"/autograder/source/{arc}"]
        if points_file is not None:
            zf.write(points_file, "points.toml")
            options += ["--points", "/autograder/source/points.toml"]
        _add_text(zf, "run_autograder", RUN_AUTOGRADER.format(options=shlex.join(options)), executable=True)
    return target


def _add_tree(zf: zipfile.ZipFile, folder: Path, arc: str) -> None:
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in _SKIP_DIRS for part in rel.parts) or path.is_symlink() or not path.is_file():
            continue
        if path.suffix in (".pyc", ".pyo"):
            continue
        zf.write(path, f"{arc}/{rel.as_posix()}")


def _add_text(zf: zipfile.ZipFile, name: str, text: str, *, executable: bool) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = ((stat.S_IFREG | (0o755 if executable else 0o644)) << 16)
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, text)

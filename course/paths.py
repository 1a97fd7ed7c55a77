"""Where the course's files live.

The *course root* holds `lessons/`, `exercises/` and `solutions/` (a clone of the
course). The learner's *workspace* is where their edited `exercises/` and their
progress live; by default it is the course root itself, so a clone is a
complete, copyable course. Both can be moved with environment variables.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DATA_DIR = PACKAGE_DIR / "data"
CHECKS_DIR = PACKAGE_DIR / "checks"


def course_root() -> Path:
    """The folder with lessons/, solutions/ and the pristine exercises/."""
    env = os.environ.get("JAXLINGS_COURSE_ROOT")
    return Path(env).resolve() if env else PACKAGE_DIR.parent


def workspace() -> Path:
    """The learner's folder: exercises/ they edit and .jaxlings/ state."""
    env = os.environ.get("JAXLINGS_WORKSPACE")
    return Path(env).resolve() if env else course_root()


def lessons_dir() -> Path:
    return course_root() / "lessons"


def solutions_dir() -> Path:
    return course_root() / "solutions"


def exercises_dir() -> Path:
    return workspace() / "exercises"


def state_dir() -> Path:
    return workspace() / ".jaxlings"

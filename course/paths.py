"""Where the course's files live.

The *course root* holds `lessons/`, `exercises/` and `solutions/` (a clone of the
course). The learner's *workspace* is where their edited `exercises/` and their
progress live; by default it is the course root itself, so a clone is a
complete, copyable course. Both can be moved with environment variables:
JAXLINGS_COURSE_ROOT (also set by `jaxlings --course DIR`) and JAXLINGS_WORKSPACE.

State (progress, hints seen, backups, settings, the check server) lives in the
workspace's `.jaxlings/`, which belongs to one course: the course whose root the
workspace is, else the course named in `.jaxlings/course`, else the first
course that uses the workspace (it writes its root there). Any other course
using the same workspace keeps its state in `.jaxlings/courses/<name>-<digest>/`,
keyed by its root's absolute path, so two courses sharing a JAXLINGS_WORKSPACE
never see each other's progress, hints, backups or check server.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DATA_DIR = PACKAGE_DIR / "data"
CHECKS_DIR = PACKAGE_DIR / "checks"
BUILTIN_ROOT = PACKAGE_DIR.parent  # the course this package ships with
COURSE_ENV = "JAXLINGS_COURSE_ROOT"
WORKSPACE_ENV = "JAXLINGS_WORKSPACE"
STATE = ".jaxlings"
OWNER = "course"  # in .jaxlings/: the root of the course that owns it


def course_root() -> Path:
    """The folder with lessons/, solutions/ and the pristine exercises/."""
    env = os.environ.get(COURSE_ENV)
    return Path(env).resolve() if env else BUILTIN_ROOT


def select_course(folder: str | os.PathLike) -> Path:
    """Use the course in `folder` from now on, in this process and every process it starts."""
    root = Path(folder).expanduser().resolve()
    os.environ[COURSE_ENV] = str(root)
    return root


def is_builtin(root: Path | None = None) -> bool:
    return (root or course_root()).resolve() == BUILTIN_ROOT


def workspace() -> Path:
    """The learner's folder: exercises/ they edit and .jaxlings/ state."""
    env = os.environ.get(WORKSPACE_ENV)
    return Path(env).resolve() if env else course_root()


def lessons_dir() -> Path:
    return course_root() / "lessons"


def solutions_dir() -> Path:
    return course_root() / "solutions"


def exercises_dir() -> Path:
    return workspace() / "exercises"


def course_key(root: Path) -> str:
    """A folder name for a course's state: readable, and unique to its root's absolute path."""
    root = Path(root).resolve()
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name).strip(".-")[:40] or "course"
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return f"{name}-{digest}"


def state_dir_for(workspace_dir: Path, root: Path, *, claim: bool = True) -> Path:
    """The state folder of the course at `root` used from `workspace_dir` (see the module doc).
    claim=False only looks: an unclaimed `.jaxlings/` is named as this course's without writing."""
    workspace_dir, root = Path(workspace_dir).resolve(), Path(root).resolve()
    base = workspace_dir / STATE
    owner = state_owner(workspace_dir)
    if owner is None:
        owner = _claim(base, root) if claim else root
    return base if owner == root else base / "courses" / course_key(root)


def state_owner(workspace_dir: Path) -> Path | None:
    """The course whose state is the workspace's own `.jaxlings/` (None: not claimed yet)."""
    if (workspace_dir / "lessons" / "course.toml").is_file():
        return workspace_dir  # a course's own folder is its workspace
    try:
        text = (workspace_dir / STATE / OWNER).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return workspace_dir / STATE / OWNER  # unreadable: nobody's, so every course keys its own
    return Path(text) if text else None


def _claim(base: Path, root: Path) -> Path:
    """Name `root` as the owner of `base`, unless another course did first (a link never overwrites)."""
    import tempfile

    try:
        base.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{OWNER}.", dir=base)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(str(root) + "\n")
            try:
                os.link(tmp, base / OWNER)
            except FileExistsError:
                raise
            except OSError:  # a file system without hard links: exclusive creation instead
                with os.fdopen(os.open(base / OWNER, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), "w",
                               encoding="utf-8") as f:
                    f.write(str(root) + "\n")
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
    except OSError:
        return root  # a workspace we cannot write to keeps no state anyway
    return state_owner(base.parent) or root


def state_dir(*, claim: bool = True) -> Path:
    """This course's state folder; claim=False for a look that writes nothing (--help, doctor)."""
    return state_dir_for(workspace(), course_root(), claim=claim)

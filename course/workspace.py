"""The learner's exercise files: restoring a starter and reading a file as Python would.

Shared by the CLI and the app, so `jaxlings reset` and the app's reset do the
same thing, and both agree with the check runner on which files are readable.

Starters come in each language of the course. The English ones are `exercises/` itself
(the course checkout is the learner's workspace); another language's are under
`starters/<lang>/`, with the same relative paths, the same code and their own docstring,
comments and `NotImplementedError` messages. When a starter's language is fixed:

- An exercise's file takes the learner's language the first time the learner works on it
  (the app opens it, or `jaxlings check`, `watch` or `hint` takes it up): if it is still the
  English starter byte for byte and the progress file has no entry for it yet, the starter
  in the language in use replaces it (`localize_starter`). Nothing else is ever rewritten.
- From then on the file is the learner's: switching the language leaves it as it is.
- `reset` restores the starter in the language in use at the time of the reset, with the
  usual backup (none when the file is a starter as shipped, in any language).
- An exercise with no starter in a language falls back to the English one.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The rule lives in the engine, which the learner's sandboxed process can import.
from course.engine.source_text import first_non_utf8, utf8_problem  # noqa: F401
from course.i18n import _


class ResetError(Exception):
    """The starter file cannot be restored; the message says why and what to do."""


class NotUtf8Error(ValueError):
    """A source file that Python would refuse: its bytes are not UTF-8 text."""


def read_source(path: str | os.PathLike, display: str | None = None) -> str:
    """The file's text, decoded strictly. Raises NotUtf8Error (with a learner-facing message) or OSError."""
    path = Path(path)
    data = path.read_bytes()
    problem = utf8_problem(data, display or str(path))
    if problem is not None:
        raise NotUtf8Error(problem)
    return data.decode("utf-8")


STARTERS = "starters"  # the course root's starters/<lang>/<file>: the starters in other languages


def translated_starter_path(exercise: Any, lang: str) -> Path:
    """Where the course keeps the starter of `exercise` in `lang` (other than English)."""
    from course import paths

    return (exercise.root or paths.course_root()) / STARTERS / lang / exercise.file


def starter_languages(exercise: Any) -> list[str]:
    """The languages this exercise has a starter in: English, then those under starters/."""
    from course import i18n

    return [i18n.DEFAULT] + [lang for lang in i18n.LANGUAGES if lang != i18n.DEFAULT
                             and translated_starter_path(exercise, lang).is_file()]


def pristine_starter(exercise: Any, lang: str | None = None) -> str:
    """The starter file as shipped with the course, in `lang` (default: the language in use).

    A language other than English reads `starters/<lang>/<file>` from the course, which the
    learner never edits; an exercise without one there gets the English starter.
    """
    from course import i18n

    lang = lang or i18n.language()
    if lang != i18n.DEFAULT:
        translated = translated_starter_path(exercise, lang)
        if translated.is_file():
            return translated.read_text(encoding="utf-8")
    return _english_starter(exercise)


def shipped_starters(exercise: Any) -> list[bytes]:
    """The starter as shipped in every language it has (English first); raises ResetError."""
    return [pristine_starter(exercise, lang).encode("utf-8") for lang in starter_languages(exercise)]


def _english_starter(exercise: Any) -> str:
    """The English starter file as shipped with the course.

    When the workspace is separate from the course (JAXLINGS_WORKSPACE), the
    course's own exercises/ is pristine. When the learner edits the course
    checkout itself, the pristine copy is the committed one: `git show HEAD:...`.
    """
    from course import paths
    from course.catalog import default_workspace

    root = (exercise.root or paths.course_root()).resolve()
    relative = f"exercises/{exercise.file}"
    if default_workspace(exercise.root).resolve() != root:
        source = root / relative
        if source.is_file():
            return source.read_text(encoding="utf-8")
        raise ResetError(_("the course at {root} has no {file} to restore from.").format(root=root, file=relative))
    try:
        proc = subprocess.run(["git", "-C", str(root), "show", f"HEAD:./{relative}"],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ResetError(_("cannot run git to find the original {file} ({error}). "
                           "Restore it from a fresh copy of the course.").format(file=relative, error=e)) from None
    if proc.returncode != 0:
        reason = proc.stderr.decode(errors="replace").strip().splitlines()
        raise ResetError(_(
            "cannot find the original {file}: the course folder {root} is not a git checkout "
            "with that file committed ({reason}). Restore it from a fresh copy of the course."
        ).format(file=relative, root=root, reason=reason[-1] if reason else _("git failed")))
    return proc.stdout.decode("utf-8")


def localize_starter(exercise: Any, progress_path: str | os.PathLike | None = None,
                     lang: str | None = None) -> bool:
    """Give the learner the starter in their language, the first time they work on an exercise.

    Only when all of these hold: the language (default: the one in use) is not English and
    the course has a starter in it; the learner's file is still the English starter byte for
    byte; and the progress file has no entry for the exercise (never checked, hinted or reset),
    so the starter's language has not been fixed yet. Returns whether the file was replaced.
    Never raises: any problem leaves the file as it is.
    """
    from course import i18n
    from course.progress import Progress

    lang = lang or i18n.language()
    if lang == i18n.DEFAULT or not translated_starter_path(exercise, lang).is_file():
        return False
    try:
        if exercise.name in Progress.load(progress_path).exercises:
            return False
        target = exercise.exercise_path()
        if target.is_symlink() or target.read_bytes() != _english_starter(exercise).encode("utf-8"):
            return False
        _write_atomically(target, pristine_starter(exercise, lang).encode("utf-8"))
    except (ResetError, OSError, ValueError):
        return False
    return True


def restore_starter(exercise: Any) -> None:
    """Overwrite the learner's file with the pristine starter (atomically), without a backup.

    Prefer `reset_exercise`, which keeps a backup and updates the progress file.
    """
    _write_atomically(exercise.exercise_path(), pristine_starter(exercise).encode("utf-8"))


def backups_dir(exercise: Any) -> Path:
    from course.catalog import default_workspace

    return default_workspace(exercise.root) / ".jaxlings" / "backups"


@dataclass(frozen=True)
class ResetOutcome:
    path: Path  # the learner's file, now the starter
    backup: Path | None  # where their code was kept (None: no file, or it was the starter already)


def reset_exercise(exercise: Any, progress_path: str | os.PathLike | None = None) -> ResetOutcome:
    """Restore the starter, keeping the learner's code under .jaxlings/backups/, and mark
    the exercise pending again in the progress file (default: the usual one).

    Raises ResetError or OSError; the learner's file is untouched unless the
    backup was written first.
    """
    from course.progress import Progress

    starter = pristine_starter(exercise).encode("utf-8")  # in the language in use
    shipped = shipped_starters(exercise)
    target = exercise.exercise_path()
    backup = None
    try:
        mine = target.read_bytes()  # bytes: a file that is not UTF-8 is kept exactly as it was
    except FileNotFoundError:
        mine = None
    if mine is not None and mine != starter and mine not in shipped:  # a starter as shipped holds nothing of theirs
        backup = _backup_path(exercise)
        _write_atomically(backup, mine)
    _write_atomically(target, starter)
    Progress.load(progress_path).reset(exercise.name)
    return ResetOutcome(target, backup)


def latest_backup(exercise: Any) -> Path | None:
    """The newest copy a reset (or a restore) kept of this exercise, or None."""
    folder = backups_dir(exercise)
    suffix = Path(exercise.file).suffix or ".py"
    try:
        found = [p for p in folder.glob(f"{exercise.name}-*{suffix}")
                 if p.is_file() and _STAMPED.fullmatch(p.name[len(exercise.name) + 1:-len(suffix) or None])]
    except OSError:
        return None
    return max(found, key=lambda p: (p.stat().st_mtime_ns, p.name), default=None)


# <date>-<time>[-n], so that `scale-…` never matches `scale_grad-…`.
_STAMPED = re.compile(r"\d{8}-\d{6}(-\d+)?")


def restore_backup(exercise: Any, backup: Path, progress_path: str | os.PathLike | None = None) -> ResetOutcome:
    """Undo a reset: the backup's bytes become the learner's file again, and the
    progress from before the reset comes back. The file being replaced is kept
    as a backup first (unless it is the starter or the same bytes), so the undo
    can itself be undone."""
    from course.progress import Progress

    data = Path(backup).read_bytes()
    target = exercise.exercise_path()
    try:
        mine = target.read_bytes()
    except FileNotFoundError:
        mine = None
    kept = None
    try:
        shipped = shipped_starters(exercise)
    except ResetError:
        shipped = []
    if mine is not None and mine != data and mine not in shipped:
        kept = _backup_path(exercise)
        _write_atomically(kept, mine)
    _write_atomically(target, data)
    Progress.load(progress_path).undo_reset(exercise.name)
    return ResetOutcome(target, kept)


def keep_unsaved(exercise: Any, text: str) -> Path:
    """Keep edits that are about to be dropped in .jaxlings/recovery/ (never next to the
    exercises, where a check or a `git add` would find them). Raises OSError."""
    from course.catalog import default_workspace

    folder = default_workspace(exercise.root) / ".jaxlings" / "recovery"
    path = _unique(folder, exercise.name, Path(exercise.file).suffix or ".py")
    _write_atomically(path, text.encode("utf-8"))
    return path


def _backup_path(exercise: Any) -> Path:
    return _unique(backups_dir(exercise), exercise.name, Path(exercise.file).suffix or ".py")


def _unique(folder: Path, name: str, suffix: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = folder / f"{name}-{stamp}{suffix}"
    n = 1
    while candidate.exists():  # two copies within a second keep both versions
        candidate = folder / f"{name}-{stamp}-{n}{suffix}"
        n += 1
    return candidate


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.jaxlings-tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, target)

"""Unsaved edits of the built-in editor, kept on disk while they are typed.

A buffer lives in memory until the learner saves it. A closed terminal (SIGHUP),
a SIGTERM, a crash or a power cut would take it along, so the app copies it, a
moment after the typing stops, to `.jaxlings/recovery/<exercise>.unsaved<suffix>`:
beside the copies a Discard keeps, never next to the exercises (where a check
or a `git add` would find it). The copy is written whole to a temporary file,
flushed to the disk and renamed over the old one, and the folder is flushed
too: a power cut leaves the old copy or the new one, never a mix.

The learner's exercise file is never written here. When the copy differs from
the file, the app offers it on the next start and lets the learner choose.

No Textual here: the app and tests drive it from any thread.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AUTOSAVE_TAG = ".unsaved"


def recovery_dir(exercise: Any) -> Path:
    from course.catalog import default_workspace

    return default_workspace(exercise.root) / ".jaxlings" / "recovery"


def _suffix(exercise: Any) -> str:
    return Path(exercise.file).suffix or ".py"


def autosave_path(exercise: Any) -> Path:
    return recovery_dir(exercise) / f"{exercise.name}{AUTOSAVE_TAG}{_suffix(exercise)}"


def write_durably(target: Path, data: bytes) -> None:
    """Replace `target` with `data` so that a crash or power cut at any moment leaves
    either the old file or the new one. Raises OSError."""
    target.parent.mkdir(parents=True, exist_ok=True)
    # One temporary name per process: two apps on one workspace never write the same one.
    tmp = target.with_name(f".{target.name}.{os.getpid()}.jaxlings-tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    # The rename is on disk only once the folder's entry is.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the file itself is synced
    finally:
        os.close(fd)


def keep_aside(exercise: Any, path: Path) -> Path:
    """Rename an autosaved copy into a dated one (as a Discard keeps), so that it is
    neither offered again nor overwritten. Returns the new path; raises OSError."""
    from course.workspace import _unique

    kept = _unique(recovery_dir(exercise), exercise.name, _suffix(exercise))
    os.replace(path, kept)
    _sync_folder(kept.parent)
    return kept


@dataclass
class Recovered:
    exercise: Any
    path: Path
    text: str | None  # None: the copy is not UTF-8 text (it is kept, never loaded)


def read_recovered(exercise: Any, disk_text: str | None) -> Recovered | None:
    """The autosaved buffer of `exercise` when it differs from `disk_text` (the file as
    it is now). A copy equal to the file holds nothing to lose: it is removed."""
    path = autosave_path(exercise)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Recovered(exercise, path, None)
    if disk_text is not None and text == disk_text:
        path.unlink(missing_ok=True)
        return None
    return Recovered(exercise, path, text)


def pending(catalog: Any) -> list[str]:
    """The exercises whose autosaved buffer differs from their file, newest copy first."""
    found: list[tuple[int, str]] = []
    for exercise in getattr(catalog, "exercises", ()):
        path = autosave_path(exercise)
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            continue
        try:
            disk = exercise.exercise_path().read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            disk = None
        if read_recovered(exercise, disk) is not None:
            found.append((stamp, exercise.name))
    return [name for _stamp, name in sorted(found, reverse=True)]


class Autosave:
    """The on-disk copy of one editor's buffer. `store` and `clear` may be called from
    any thread: each carries the generation of the buffer it was taken from, and an
    older generation never overwrites a newer one, so a slow write that finishes after
    a save cannot bring back a copy the save removed.

    A copy found on disk that this editor did not write (the last run's, or another
    app's on the same workspace) is never overwritten: the first store renames it into a
    dated copy first, and reports where."""

    def __init__(self, exercise: Any) -> None:
        self.exercise = exercise
        self.path = autosave_path(exercise)
        self._lock = threading.Lock()
        self._generation = 0  # the newest buffer that was written or cleared
        self._owned = False  # the file at `path` holds this editor's buffer

    def store(self, generation: int, text: str) -> Path | None:
        """Write `text` (unless a newer generation got there first). Returns the dated
        copy an earlier run's buffer was moved to, if one was. Raises OSError."""
        with self._lock:
            if generation <= self._generation:
                return None
            displaced = None
            if not self._owned and self.path.exists():
                displaced = keep_aside(self.exercise, self.path)
            write_durably(self.path, text.encode("utf-8"))
            self._owned = True
            self._generation = generation
            return displaced

    def clear(self, generation: int) -> None:
        """The buffer equals the file (saved, discarded, or typed back): no copy is needed.
        A copy this editor did not write stays. Raises OSError."""
        with self._lock:
            if generation <= self._generation:
                return
            self._generation = generation
            if self._owned:
                self.path.unlink(missing_ok=True)
                self._owned = False

    def adopt(self) -> None:
        """The learner took the copy on disk into this editor: it is this editor's now."""
        with self._lock:
            self._owned = True

    def set_aside(self) -> Path | None:
        """The learner kept the file instead: the copy becomes a dated one. Raises OSError."""
        with self._lock:
            if not self.path.exists():
                return None
            self._owned = False
            return keep_aside(self.exercise, self.path)

"""The learner's progress: a small JSON file keyed by exercise name.

    {"format_version": 1,
     "exercises": {"interop": {"done": true, "attempts": 3, "last_cause": null,
                               "first_pass": "2026-05-01T10:12:03+00:00", "hints_seen": 1,
                               "history": [{"done": true, "attempts": 2, "first_pass": "...",
                                            "reset_at": "2026-05-02T08:00:00+00:00"}]}}}

A reset makes an exercise pending again, but it forgets nothing: the record
until then moves into `history` (oldest first), and undoing the reset brings
it back. `history` is optional, so files written before it existed read the
same, and older versions of jaxlings read these files (they ignore the key).
The optional `lessons` table ({"arrays": {"read": true}}) records which lessons
were opened, so that "what comes next" can send the learner to a lesson first.

Names, not positions, so the file survives a course update and can be copied
to another machine. Writes are atomic (temp file + fsync + rename) and every
read-modify-write holds an fcntl lock on a side file, so two running instances
(the app and `jaxlings watch`, say) never lose each other's updates or leave a
half-written file. A corrupt file is moved aside with a timestamp, reported in
`warnings`, and the course carries on from an empty record.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from course import paths
from course.i18n import _

FORMAT_VERSION = 1
ENV_VAR = "JAXLINGS_PROGRESS"


def default_path() -> Path:
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else paths.state_dir() / "progress.json"


class Progress:
    def __init__(self, path: Path, data: dict[str, Any] | None = None, warnings: list[str] | None = None) -> None:
        self.path = Path(path)
        self.exercises: dict[str, dict[str, Any]] = (data or {}).get("exercises", {})
        self.lessons: dict[str, dict[str, Any]] = _lessons(data or {})
        self.warnings: list[str] = list(warnings or [])

    # -- loading and saving ------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> "Progress":
        path = Path(path) if path is not None else default_path()
        warnings: list[str] = []
        with _locked(path):
            data = _read(path, warnings)
        return cls(path, data, warnings)

    def _update(self, name: str, change) -> dict[str, Any]:  # noqa: ANN001
        """Apply `change(entry)` to the freshest copy on disk, under the lock, and save."""
        with _locked(self.path):
            data = _read(self.path, self.warnings)
            exercises = data.setdefault("exercises", {})
            entry = exercises.setdefault(name, _new_entry())
            change(entry)
            _write(self.path, data)
            self.exercises = exercises
            self.lessons = _lessons(data)
            return entry

    # -- queries -------------------------------------------------------------------
    def entry(self, name: str) -> dict[str, Any] | None:
        e = self.exercises.get(name)
        return dict(e) if e is not None else None

    def is_done(self, name: str) -> bool:
        return bool(self.exercises.get(name, {}).get("done"))

    def done_names(self) -> set[str]:
        return {n for n, e in self.exercises.items() if e.get("done")}

    def next_pending(self, catalog: Any) -> Any:
        """The first exercise in course order that is not done (None: all done)."""
        for exercise in catalog.exercises:
            if not self.is_done(exercise.name):
                return exercise
        return None

    def lesson_started(self, lesson: Any) -> bool:
        """The lesson was opened, or one of its exercises was tried (before lessons were recorded)."""
        return bool(self.lessons.get(lesson.name, {}).get("read")) or any(
            self.exercises.get(e.name) is not None for e in lesson.exercises)

    def next_step(self, catalog: Any, after: str | None = None) -> tuple[str, Any] | None:
        """What comes next in the course's order after the exercise `after`: ("lesson", lesson)
        for a lesson not opened yet, else ("exercise", exercise) for one not done; past the
        end it starts again from the top (None: every exercise is done and every lesson opened)."""
        steps: list[tuple[str, Any]] = []
        for lesson in catalog.lessons:
            steps.append(("lesson", lesson))
            steps.extend(("exercise", e) for e in lesson.exercises)
        here = next((i for i, (kind, item) in enumerate(steps) if kind == "exercise" and item.name == after), -1)
        for kind, item in steps[here + 1:] + steps[:here + 1]:
            if kind == "exercise" and item.name != after and not self.is_done(item.name):
                return kind, item
            if kind == "lesson" and not self.lesson_started(item):
                return kind, item
        return None

    def hint_level(self, name: str) -> int:
        """How many hints of this exercise the learner has seen."""
        return int(self.exercises.get(name, {}).get("hints_seen", 0))

    # -- changes ---------------------------------------------------------------------
    def record(self, result: Any) -> None:
        """Count an attempt; a pass marks the exercise done (a later fail does not undo it)."""

        def change(entry: dict[str, Any]) -> None:
            entry["attempts"] = int(entry.get("attempts", 0)) + 1
            entry["last_cause"] = None if result.passed else result.cause
            if result.passed:
                entry["done"] = True
                entry.setdefault("first_pass", None)
                if entry["first_pass"] is None:
                    entry["first_pass"] = _now()

        self._update(result.exercise, change)

    def mark_read(self, lesson_name: str) -> None:
        """Record that a lesson was opened (once: the file is not written again after that)."""
        if self.lessons.get(lesson_name, {}).get("read"):
            return
        with _locked(self.path):
            data = _read(self.path, self.warnings)
            lessons = data.get("lessons")
            if not isinstance(lessons, dict):
                lessons = data["lessons"] = {}
            entry = lessons.get(lesson_name)
            lessons[lesson_name] = {**(entry if isinstance(entry, dict) else {}), "read": True}
            _write(self.path, data)
            self.exercises = data.setdefault("exercises", {})
            self.lessons = _lessons(data)

    def reveal_hint(self, name: str, available: int | None = None) -> int:
        """Mark one more hint as seen; returns the new level (capped at `available`)."""

        def change(entry: dict[str, Any]) -> None:
            level = int(entry.get("hints_seen", 0)) + 1
            entry["hints_seen"] = level if available is None else min(level, available)

        return int(self._update(name, change)["hints_seen"])

    def passed_before(self, name: str) -> bool:
        """Passed at some point, now or before a reset."""
        entry = self.exercises.get(name, {})
        return bool(entry.get("done")) or any(h.get("done") for h in _history(entry))

    def reset(self, name: str) -> None:
        """Make an exercise pending again. Its record so far (passes, attempts) moves
        into its history; the hints seen stay seen."""
        with _locked(self.path):
            data = _read(self.path, self.warnings)
            exercises = data.setdefault("exercises", {})
            old = exercises.get(name)
            if old is not None:
                history = _history(old)
                if old.get("done") or old.get("attempts"):
                    history.append({"done": bool(old.get("done")), "attempts": int(old.get("attempts", 0)),
                                    "first_pass": old.get("first_pass"), "reset_at": _now()})
                entry = _new_entry()
                entry["hints_seen"] = int(old.get("hints_seen", 0))
                if history:
                    entry["history"] = history
                exercises[name] = entry
            _write(self.path, data)
            self.exercises = exercises
            self.lessons = _lessons(data)

    def undo_reset(self, name: str) -> None:
        """The record from before the last reset is current again (what happened since is added to it)."""
        with _locked(self.path):
            data = _read(self.path, self.warnings)
            entry = data.setdefault("exercises", {}).get(name)
            history = _history(entry or {})
            if not history:
                return
            last = history.pop()
            entry["done"] = bool(entry.get("done")) or bool(last.get("done"))
            entry["attempts"] = int(entry.get("attempts", 0)) + int(last.get("attempts", 0))
            entry["first_pass"] = last.get("first_pass") or entry.get("first_pass")
            if history:
                entry["history"] = history
            else:
                entry.pop("history", None)
            _write(self.path, data)
            self.exercises = data["exercises"]
            self.lessons = _lessons(data)


def _lessons(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    lessons = data.get("lessons")
    if not isinstance(lessons, dict):
        return {}
    return {name: entry for name, entry in lessons.items() if isinstance(entry, dict)}


def _history(entry: dict[str, Any]) -> list[dict[str, Any]]:
    history = entry.get("history")
    return [dict(h) for h in history if isinstance(h, dict)] if isinstance(history, list) else []


def _new_entry() -> dict[str, Any]:
    return {"done": False, "attempts": 0, "last_cause": None, "first_pass": None, "hints_seen": 0}


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `<file>.lock` for one read-modify-write (blocking)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _read(path: Path, warnings: list[str]) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"format_version": FORMAT_VERSION, "exercises": {}}
    except OSError as e:
        warnings.append(_("cannot read your progress file {path}: {error}; progress is not saved this time").format(
            path=path, error=e))
        raise
    problem = None
    try:
        data = json.loads(text)
        problem = _shape_problem(data)
    except (ValueError, UnicodeDecodeError) as e:
        problem = _("it is not valid JSON ({error})").format(error=e)
    if problem is None:
        return data
    backup = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
        n += 1
    os.replace(path, backup)
    warnings.append(_("your progress file {path} was unreadable: {problem}. It was moved to {backup}; "
                      "starting from an empty record.").format(path=path, problem=problem, backup=backup))
    return {"format_version": FORMAT_VERSION, "exercises": {}}


def _shape_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return _("it is not a JSON object")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        return f"format_version is {version!r}, this jaxlings reads {FORMAT_VERSION}"
    exercises = data.get("exercises")
    if not isinstance(exercises, dict) or not all(isinstance(v, dict) for v in exercises.values()):
        return _("its 'exercises' entry is not a table of exercises")
    return None


def _write(path: Path, data: dict[str, Any]) -> None:
    data["format_version"] = FORMAT_VERSION
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    # Make the rename itself durable.
    with contextlib.suppress(OSError):
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

"""The course core as the app sees it.

Every call into the catalog, progress store, check runner, starter reset and
training lab goes through one `Services` object. Two reasons: the heavy core
modules (jax, torch, the pytest runner) are imported here lazily, inside the
worker threads that call them, so the first frame never waits for them; and
tests can hand the app a `Services` with some parts replaced by fakes, so that
screenshots don't depend on this machine's hardware, clock or random seeds.

No course logic lives here: each method forwards to the core.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import tempfile
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from course.i18n import _

APP_STATE_FILE = "app-state.json"


class Services:
    def __init__(self) -> None:
        self._session: Any = None
        self._session_lock = threading.Lock()
        self._hardware: Any = None

    # -- catalog and progress -------------------------------------------------
    def load_catalog(self):
        from course.catalog import load_catalog

        return load_catalog()

    def load_progress(self):
        from course.progress import Progress

        return Progress.load()

    # -- files ------------------------------------------------------------------
    def reload_progress(self, progress):
        """The progress file as it is now on disk (another jaxlings may have written it)."""
        from course.progress import Progress

        return Progress.load(progress.path)

    def progress_path(self) -> Path:
        from course.progress import default_path

        return default_path()

    # -- files ------------------------------------------------------------------
    def read_text(self, path: Path) -> str:
        return Path(path).read_text(encoding="utf-8")

    def read_learner_file(self, path: Path) -> tuple[str | None, str | None]:
        """(text, None), or (None, why it cannot be edited here) for a file that
        must never be written back: missing, unreadable, or not UTF-8 (the same
        test the check runner and the CLI apply, where the core offers it)."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None, _("{file} does not exist. Reset (r) restores the starter file.").format(file=path.name)
        except OSError as error:
            return None, _("{file} cannot be read: {error}.").format(file=path.name, error=error.strerror or error)
        try:
            return data.decode("utf-8"), None
        except UnicodeDecodeError as error:
            try:
                from course.workspace import utf8_problem
            except ImportError:
                problem = _("{file} is not UTF-8 text (byte {offset} cannot be decoded).").format(
                    file=path.name, offset=error.start)
            else:
                problem = utf8_problem(data, path.name)
            return None, problem + " " + _(
                "It is not opened here, so nothing here can save over it. "
                "Fix its encoding in your own editor, or reset it (r; your file is kept as a backup)."
            )

    def write_text(self, path: Path, text: str) -> None:
        """Write atomically: a temp file in the same folder, fsync, rename over the
        original. The watcher and the check runner never see half a file, a failed
        write (disk full, no permission) leaves the original as it was, and the
        file keeps its permissions."""
        path = Path(path)
        if path.is_symlink():
            path = path.resolve()
        try:
            mode = path.stat().st_mode & 0o7777
        except FileNotFoundError:
            mode = None
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".jaxlings-tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise

    # -- the learner's own editor ---------------------------------------------------
    def resolve_editor(self) -> tuple[list[str] | None, str | None]:
        """The command for $VISUAL/$EDITOR (else a common terminal editor), checked to
        exist before the app hands the terminal over. Returns (argv, None),
        (None, why not), or (argv, a warning worth showing before it runs)."""
        try:
            from course.editor import resolve_editor  # shared with `jaxlings doctor` where present
        except ImportError:
            resolve_editor = None
        if resolve_editor is not None:
            return resolve_editor()
        for var in ("VISUAL", "EDITOR"):
            value = os.environ.get(var, "").strip()
            if not value:
                continue
            try:
                argv = shlex.split(value)
            except ValueError as error:
                return None, _("${var} cannot be read as a command ({error}).").format(var=var, error=error)
            if not argv:
                continue
            if shutil.which(argv[0]) is None:
                return None, _("${var} is {value}, but {program} is not an installed program.").format(
                    var=var, value=repr(value), program=repr(argv[0]))
            return argv, None
        for name in ("nano", "vim", "vi", "emacs"):
            found = shutil.which(name)
            if found:
                return [found], None
        return None, _("No editor found. Set $EDITOR, for example: export EDITOR=nano.")

    # -- where the learner left off ----------------------------------------------------
    def app_state_path(self) -> Path:
        from course import paths

        return paths.state_dir() / APP_STATE_FILE

    def load_app_state(self) -> dict[str, Any]:
        """The last screen, or {} when there is none or it cannot be read: a lost
        bookmark only means starting on the map."""
        try:
            data = json.loads(self.app_state_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def save_app_state(self, state: dict[str, Any]) -> None:
        path = self.app_state_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        self.write_text(path, json.dumps(state, ensure_ascii=True))

    def save_language(self, lang: str) -> None:
        """Remember the app's language in the workspace's .jaxlings/settings.json."""
        from course import i18n, paths

        i18n.save_language(lang, paths.state_dir())

    def load_lesson(self, path: Path):
        from course.lessons import load_lesson

        return load_lesson(path)

    def mark_lesson_read(self, lesson, progress) -> None:
        """Record that the learner opened this lesson (what comes next reads it)."""
        progress.mark_read(lesson.name)

    def localize_starter(self, exercise, progress) -> bool:
        """The first time the learner works on an exercise, its untouched English starter
        becomes the starter in the language in use (see course/workspace.py)."""
        from course.workspace import localize_starter

        return localize_starter(exercise, progress.path)

    def restore_starter(self, exercise) -> None:
        from course.shell import commands

        commands.restore_starter(exercise)

    def reset_exercise(self, exercise, progress) -> tuple[Path | None, Any]:
        """Restore the starter, keep the learner's code under .jaxlings/backups/ and
        mark the exercise pending. Returns (the backup, or None when there was
        nothing to keep; the progress as it now is)."""
        try:
            from course.workspace import reset_exercise  # the same reset as `jaxlings reset`
        except ImportError:
            reset_exercise = None
        if reset_exercise is not None:
            outcome = reset_exercise(exercise, progress.path)
            return outcome.backup, self.reload_progress(progress)
        from course import paths

        source = exercise.exercise_path()
        backup = None
        if source.is_file():
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
            folder = paths.state_dir() / "backups"
            folder.mkdir(parents=True, exist_ok=True)
            backup = folder / f"{exercise.name}-{stamp}{source.suffix}"
            shutil.copy2(source, backup)
        self.restore_starter(exercise)
        progress.reset(exercise.name)
        return backup, progress

    def latest_backup(self, exercise) -> Path | None:
        from course.workspace import latest_backup

        return latest_backup(exercise)

    def restore_backup(self, exercise, backup: Path, progress) -> tuple[Path | None, Any]:
        """Undo a reset: (the copy kept of the file it replaced, or None; the progress as it now is)."""
        from course.workspace import restore_backup

        outcome = restore_backup(exercise, backup, progress.path)
        return outcome.backup, self.reload_progress(progress)

    def keep_unsaved(self, exercise, text: str) -> Path:
        """Keep edits about to be dropped under .jaxlings/recovery/; raises OSError."""
        from course.workspace import keep_unsaved

        return keep_unsaved(exercise, text)

    def recovered_exercises(self, catalog) -> list[str]:
        """Exercises whose unsaved edits were kept when the app last ended (and differ
        from their file), newest first. A folder that cannot be read has none to offer."""
        from course.recovery import pending

        try:
            return pending(catalog)
        except OSError:
            return []

    # -- checks -----------------------------------------------------------------
    def warm_up_checks(self, exercise=None) -> None:
        """Start the check runner's warm child ahead of the first check, and run `exercise`'s
        first check ahead (`CheckSession.prepare`)."""
        with self._session_lock:
            session = self._open_session()
            if exercise is not None:
                session.prepare(exercise)

    def isolation_notice(self) -> str | None:
        """One line when checks run without a sandbox here (None when sandboxed, or no session yet)."""
        session = self._session
        iso = getattr(session, "isolation", None)
        if session is None or (iso is not None and iso.sandboxed):
            return None
        return iso.notice() if iso is not None else _("Isolation: none (checks run as a plain process).")

    def check_budget(self, exercise) -> float:
        """Seconds a check of this exercise may take, as the runner will allow."""
        from course.engine.settings import DEFAULT_TIMEOUT, check_settings

        try:
            settings = check_settings(exercise.check_path())
        except Exception:
            return float(exercise.timeout or DEFAULT_TIMEOUT)
        return float(exercise.timeout or settings.timeout or DEFAULT_TIMEOUT)

    def run_check(self, exercise, on_outcome=None):
        """The verdict; `on_outcome` is told each test's outcome as it lands (on this worker's thread)."""
        # One check at a time: a cancelled worker's thread may still be inside
        # `run`, and the session's warm child is not shared between callers.
        with self._session_lock:
            return self._open_session().run(exercise, on_outcome=on_outcome)

    def _open_session(self):
        if self._session is None:
            from course.engine.runner import CheckSession, workspace_compile_cache

            self._session = CheckSession(compile_cache=workspace_compile_cache(), run_ahead=True)
        return self._session

    def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()

    # -- training lab -------------------------------------------------------------
    def lab_variants(self) -> dict[str, str]:
        from course.lab.api import VARIANTS

        return dict(VARIANTS)

    def detect_hardware(self):
        # Imports jax and torch: seconds the first time, so done once per session.
        if self._hardware is None:
            from course.lab.api import detect_hardware

            self._hardware = detect_hardware()
        return self._hardware

    def run_lab(
        self,
        variants: list[str],
        epochs: int,
        on_progress: Callable[[Any], None],
        cancel: threading.Event,
        epochs_per_variant: dict[str, int] | None = None,
    ):
        from course.lab.api import LabConfig
        from course.lab.child import run_lab_in_child

        config = LabConfig(
            variants=list(variants), epochs=epochs, epochs_per_variant=dict(epochs_per_variant or {})
        )
        # In its own process: drawing the screen here must not slow the training
        # loops it times, and a crash in a backend must not take the app down.
        return run_lab_in_child(config, on_progress=on_progress, cancel=cancel)

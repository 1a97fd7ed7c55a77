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

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


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
    def read_text(self, path: Path) -> str:
        return Path(path).read_text(encoding="utf-8")

    def write_text(self, path: Path, text: str) -> None:
        # Write-then-rename so a watcher (or the check runner) never sees half a file.
        path = Path(path)
        tmp = path.with_name(f".{path.name}.jaxlings-tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)

    def load_lesson(self, path: Path):
        from course.lessons import load_lesson

        return load_lesson(path)

    def restore_starter(self, exercise) -> None:
        from course import commands

        commands.restore_starter(exercise)

    # -- checks -----------------------------------------------------------------
    def warm_up_checks(self) -> None:
        """Start the check runner's warm child ahead of the first check."""
        with self._session_lock:
            self._open_session()

    def isolation_notice(self) -> str | None:
        """One line when checks run without a sandbox here (None when sandboxed, or no session yet)."""
        session = self._session
        iso = getattr(session, "isolation", None)
        if session is None or (iso is not None and iso.sandboxed):
            return None
        return iso.notice() if iso is not None else "Isolation: none (checks run as a plain process)."

    def run_check(self, exercise):
        # One check at a time: a cancelled worker's thread may still be inside
        # `run`, and the session's warm child is not shared between callers.
        with self._session_lock:
            return self._open_session().run(exercise)

    def _open_session(self):
        if self._session is None:
            from course.engine.runner import CheckSession

            self._session = CheckSession()
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

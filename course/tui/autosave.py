"""An exercise screen's unsaved edits, copied to .jaxlings/recovery/ as they are typed.

A copy is written a moment after the typing stops (DELAY_S, or
JAXLINGS_AUTOSAVE_DELAY seconds), and at least every MAX_WAIT_S while it goes on, in a worker thread: an fsync on a busy disk must not
hold up the keys. A buffer that becomes equal to the file (saved, discarded, typed
back) removes the copy at once, on the event loop, so that nothing that follows
(leaving the screen, the next check of the folder) can see a stale one. Before the
app ends on SIGHUP or SIGTERM, `flush` writes whatever is still waiting.
"""

from __future__ import annotations

import os
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from course.i18n import N_, _
from course.recovery import Autosave, Recovered, read_recovered

if TYPE_CHECKING:
    from course.tui.screens.exercise import ExerciseScreen


def _seconds(name: str, default: float) -> float:
    try:
        return max(0.0, float(os.environ.get(name, default)))
    except ValueError:
        return default


class EditorAutosave:
    DELAY_S = _seconds("JAXLINGS_AUTOSAVE_DELAY", 1.0)
    MAX_WAIT_S = 5 * DELAY_S

    def __init__(self, screen: ExerciseScreen) -> None:
        self.screen = screen
        self.copy = Autosave(screen.exercise)
        self._generation = 0
        self._timer: Any = None
        self._waiting_since: float | None = None  # the first change not on disk yet
        self._failing = False  # told the learner once; said again only after a success

    # -- the buffer or the file changed ----------------------------------------------
    def changed(self) -> None:
        """Call on the event loop after every change of the buffer or of the file's text."""
        self._generation += 1
        if not self.screen.dirty():
            self.flush()
            return
        now = time.monotonic()
        if self._waiting_since is None:
            self._waiting_since = now
        # Never 0: Textual's timer divides by its interval (a zero one raised in the middle of typing).
        delay = max(0.01, min(self.DELAY_S, self._waiting_since + self.MAX_WAIT_S - now))
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.screen.set_timer(delay, self._write_soon, name="autosave")

    def _snapshot(self) -> tuple[int, str | None]:
        """(generation, the buffer to keep, or None when no copy is needed)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._waiting_since = None
        dirty = self.screen.is_mounted and self.screen.dirty()
        return self._generation, (self.screen.editor.text if dirty else None)

    def _write_soon(self) -> None:
        generation, text = self._snapshot()
        self.screen.run_worker(partial(self._write, generation, text), thread=True, group="autosave",
                               exit_on_error=False, description=N_("keeping your unsaved edits"))

    def flush(self) -> None:
        """Write (or remove) the copy now, on this thread: before the app ends, or once
        the buffer equals the file."""
        generation, text = self._snapshot()
        self._write(generation, text, from_thread=False)

    def _write(self, generation: int, text: str | None, from_thread: bool = True) -> None:
        try:
            if text is None:
                self.copy.clear(generation)
                displaced = None
            else:
                displaced = self.copy.store(generation, text)
        except OSError as error:
            if not self._failing:
                self._failing = True
                self._tell(from_thread, _("Your unsaved edits could not be copied to .jaxlings/recovery/ "
                                          "({error}). Ctrl+S saves them to the file.").format(
                    error=error.strerror or error), _("No recovery copy"), "warning")
            return
        self._failing = False
        if displaced is not None:
            self._tell(from_thread, _("Unsaved edits from an earlier run of jaxlings are kept in {path}.").format(
                path=_short(displaced)), _("Recovered edits kept"), "information")

    def _tell(self, from_thread: bool, message: str, title: str, severity: str) -> None:
        notify = partial(self.screen.notify, message, title=title, severity=severity, timeout=15, markup=False)
        if not from_thread:
            notify()
            return
        try:
            self.screen.app.call_from_thread(notify)
        except RuntimeError:
            pass  # the app is gone: nobody is left to tell, and the copy (or its absence) is what it is

    # -- what the last run left ----------------------------------------------------
    def offer(self, disk_text: str) -> None:
        """Call once the file has loaded: if an earlier run left unsaved edits that
        differ from it, ask the learner which to keep. Nothing is written until they answer."""
        from course.tui.screens.recover import RecoverScreen

        recovered = read_recovered(self.screen.exercise, disk_text)
        if recovered is None:
            return
        if recovered.text is None:
            self._answered(recovered, RecoverScreen.DISK)
            return
        self.screen.app.push_screen(RecoverScreen(self.screen.exercise.file, disk_text, recovered.text,
                                                  _short(recovered.path)),
                                    partial(self._answered, recovered))

    def _answered(self, recovered: Recovered, answer: str | None) -> None:
        from course.tui.screens.recover import RecoverScreen

        screen = self.screen
        file = screen.exercise.file
        if answer == RecoverScreen.RECOVERED and recovered.text is not None:
            if screen.dirty() and not screen.keep_unsaved():
                return  # edits typed meanwhile could not be kept: the recovered copy waits
            self.copy.adopt()
            screen.editor.load_text(recovered.text)
            screen.notify(_("The recovered edits are in the editor, not saved yet: Ctrl+S writes them to {file}.")
                          .format(file=file), title=_("Edits recovered"), timeout=12, markup=False)
        elif answer == RecoverScreen.DISK:
            try:
                kept = self.copy.set_aside()
            except OSError as error:
                screen.notify(_("The recovered edits stay in {path}: {error}.").format(
                    path=recovered.path, error=error.strerror or error), severity="warning", timeout=15, markup=False)
                return
            if kept is not None:
                screen.notify(_("{file} stays as it is. The recovered edits are kept in {path}.").format(
                    file=file, path=_short(kept)), title=_("File kept"), timeout=15, markup=False)
        else:
            screen.notify(_("The recovered edits stay in {path}, and are offered again when you next open {name}.")
                          .format(path=_short(recovered.path), name=screen.exercise.name),
                          title=_("Nothing changed"), timeout=12, markup=False)


def _short(path: Path) -> str:
    parts = Path(path).parts
    return str(Path(*parts[parts.index(".jaxlings"):])) if ".jaxlings" in parts else str(path)

"""The jaxlings app: course map, lessons, exercises and the training lab."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual import events, on
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState, get_current_worker

from course import i18n
from course.i18n import N_, _
from course.tui.commands import CourseCommands
from course.tui.ordered_keys import OrderedKeys
from course.tui.errors import describe
from course.tui.screens.map import MapScreen
from course.tui.screens.too_small import TooSmallScreen, too_small
from course.tui.services import Services
from course.tui.watch import watch_file

# The words of Textual's own palette commands (textual.app.App.get_system_commands).
TEXTUAL_COMMANDS = (
    N_("Theme"), N_("Change the current theme"), N_("Quit"), N_("Quit the application as soon as possible"),
    N_("Keys"), N_("Hide the keys and widget help panel"),
    N_("Show help for the focused widget and a summary of available keys"),
    N_("Minimize"), N_("Minimize the widget and restore to normal size"),
    N_("Maximize"), N_("Maximize the focused widget"),
    N_("Screenshot"), N_("Save an SVG 'screenshot' of the current screen"),
)

LIGHT_THEME = "textual-light"
DARK_THEME = "textual-dark"


class JaxlingsApp(OrderedKeys, App[int]):
    TITLE = "jaxlings"
    SUB_TITLE = N_("from PyTorch to JAX, Flax and Optax")
    CSS_PATH = ["app.tcss"]
    COMMANDS = App.COMMANDS | {CourseCommands}
    # Below this width the PyTorch and JAX panels stack and the contents pane hides.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("f1", "help", N_("Help"), id="help", tooltip=N_("Every key, on every screen")),
        # `?` types into the editor when it has the focus, so the footer shows F1 only.
        Binding("question_mark", "help", N_("Help"), id="help.question", show=False,
                tooltip=N_("Every key (outside the editor)")),
        Binding("ctrl+t", "toggle_theme", N_("Theme"), id="theme", tooltip=N_("Switch between light and dark"), show=False),
        Binding("ctrl+q", "quit", N_("Quit"), id="quit", priority=True,
                tooltip=N_("Leave the course (progress is kept; asks about unsaved edits)")),
        Binding("f2", "language", N_("Language"), id="language", show=False,
                tooltip=N_("Read the course in English or 日本語 (remembered for this workspace)")),
    ]

    @dataclass
    class ProgressReloaded(Message):
        progress: Any

    def __init__(self, services: Services | None = None, *, theme: str = DARK_THEME) -> None:
        super().__init__()
        self.services = services or Services()
        self.theme = theme
        self.catalog: Any = None
        self.sub_title = self.course_subtitle()
        self.progress: Any = None
        self._remembered: dict[str, Any] | None = None
        self._state_lock = threading.Lock()
        # Training-lab reports live for the session; saving is the learner's choice.
        self.lab_reports: list[Any] = []

    def course_subtitle(self) -> str:
        """The header's words after "jaxlings": the title in a course's manifest. The course that
        comes with jaxlings keeps its own translated line (its manifest title says the same)."""
        from course import paths

        catalog = self.catalog
        if catalog is None or not getattr(catalog, "title", "") or paths.is_builtin(catalog.root):
            return _(self.SUB_TITLE)
        return i18n.content(catalog.title)

    def get_default_screen(self) -> MapScreen:
        return MapScreen()

    def on_mount(self) -> None:
        self._catch_signals()

    def on_unmount(self) -> None:
        self.services.close()

    # -- the terminal closing under the app ------------------------------------------
    def _catch_signals(self) -> None:
        """SIGHUP (the terminal or the SSH connection went away) and SIGTERM end the app
        only after the unsaved edits are on disk. The loop runs the handler as an ordinary
        callback, between two events: never inside a write the handler could interrupt."""
        import asyncio
        import signal

        if self.is_headless:
            return  # under a test runner the signals belong to the runner
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGHUP, signal.SIGTERM):
            try:
                loop.add_signal_handler(signum, self._end_on_signal, signum)
            except (NotImplementedError, RuntimeError, ValueError):
                pass  # no signals here (not the main thread, another platform)

    def _end_on_signal(self, signum: int) -> None:
        try:
            self.keep_unsaved_edits()
        except Exception as error:  # the app must still end: a copy from a second ago is on disk
            self.log.error(f"unsaved edits not written on signal {signum}: {error!r}")
        self.exit(return_code=128 + signum)

    def _handle_exception(self, error: Exception) -> None:
        # A crash ends the app: the typing of the last second goes to the recovery copy first.
        try:
            self.keep_unsaved_edits()
        except Exception as failure:
            self.log.error(f"unsaved edits not written after a crash: {failure!r}")
        super()._handle_exception(error)

    def keep_unsaved_edits(self) -> None:
        """Write every pending copy of unsaved edits to .jaxlings/recovery/ now."""
        for screen in self.screen_stack:
            autosave = getattr(screen, "autosave", None)
            if autosave is not None and screen.is_mounted:
                autosave.flush()

    # -- navigation used by screens and the command palette ---------------------
    # The stack is the map plus at most one lesson, exercise or the lab, so Esc
    # always means "back to the map", however the learner got there.
    def _go(self, make: Callable[[], Screen], state: dict[str, str]) -> None:
        def go() -> None:
            while len(self.screen_stack) > 1:
                self.pop_screen()
            self.push_screen(make())
            self.remember(state)
            self._check_size()

        self._leave_current(go, _("moving on"))

    def _leave_current(self, then: Callable[[], None], doing: str) -> None:
        """Ask the exercise being edited (if any) about unsaved edits, then `then()`."""
        from course.tui.screens.exercise import ExerciseScreen

        editing = [s for s in self.screen_stack if isinstance(s, ExerciseScreen) and s.dirty()]
        if editing:
            editing[-1].confirm_leave(lambda: self._leave_current(then, doing), doing)
        else:
            then()

    def back_to_map(self) -> None:
        while len(self.screen_stack) > 1:
            self.pop_screen()

    def action_back_to_map(self) -> None:
        self._leave_current(self.back_to_map, _("going back to the map"))

    def open_lesson(self, lesson_name: str) -> None:
        from course.tui.screens.lesson import LessonScreen

        lesson = next(l for l in self.catalog.lessons if l.name == lesson_name)
        self._go(lambda: LessonScreen(lesson), {"screen": "lesson", "name": lesson_name})

    def open_exercise(self, exercise_name: str) -> None:
        from course.tui.screens.exercise import ExerciseScreen

        exercise = self.catalog.exercise(exercise_name)
        self._go(lambda: ExerciseScreen(exercise), {"screen": "exercise", "name": exercise_name})

    def open_lab(self) -> None:
        from course.tui.screens.lab import LabScreen

        # One lab for the whole session: installed, so a run goes on (and its
        # results stay) while the learner reads a lesson.
        if not self.is_screen_installed("lab"):
            self.install_screen(LabScreen(), "lab")
        self._go(lambda: self.get_screen("lab"), {"screen": "lab"})

    def action_quit(self) -> None:  # type: ignore[override]
        self._leave_current(self.exit, _("quitting"))

    # -- where the learner left off -----------------------------------------------
    def remember(self, state: dict[str, str]) -> None:
        if self._remembered == state:
            return
        self._remembered = dict(state)
        self.run_worker(self._save_state, thread=True, group="state",
                        exit_on_error=False, description=N_("remembering where you are"))

    def _save_state(self) -> None:
        # Whichever thread writes last writes the latest screen, not the one it was started for.
        try:
            with self._state_lock:
                self.services.save_app_state(dict(self._remembered))
        except OSError as error:  # a lost bookmark costs one click; not worth a dialog
            self.log.warning(f"could not remember the screen: {error}")

    def reopen_last(self, state: dict[str, Any]) -> None:
        """Open the screen the learner was on when they last quit (if it still exists);
        but first an exercise whose unsaved edits were kept when the app last ended, where
        the learner chooses between them and the file."""
        self._remembered = dict(state)
        kind, name = state.get("screen"), state.get("name")
        recovered = self.services.recovered_exercises(self.catalog)
        if recovered and not (kind == "exercise" and name in recovered):
            kind, name = "exercise", recovered[0]
        if len(recovered) > 1:
            self.notify(_("Unsaved edits were also kept for: {names}. Open each to choose what to keep.").format(
                names=", ".join(n for n in recovered if n != name)), title=_("Recovered edits"), timeout=20,
                markup=False)
        if kind == "lesson" and any(l.name == name for l in self.catalog.lessons):
            self.open_lesson(name)
        elif kind == "exercise" and any(e.name == name for e in self.catalog.exercises):
            self.open_exercise(name)
        elif kind == "lab":
            self.open_lab()

    # -- progress changed by anyone (this app, `jaxlings watch`, another machine's copy)
    def watch_progress(self) -> None:
        self.run_worker(self._watch_progress, thread=True, exclusive=True, group="watch",
                        exit_on_error=False, description=N_("watching your progress"))

    def _watch_progress(self) -> None:
        worker = get_current_worker()
        path = self.services.progress_path()

        def changed(_text: str) -> None:
            if self.progress is None:
                return
            try:
                progress = self.services.reload_progress(self.progress)
            except OSError as error:  # unreadable for a moment: the next change tries again
                self.log.warning(f"could not reload progress: {error}")
                return
            self.post_message(self.ProgressReloaded(progress))

        watch_file(path, worker.cancelled_event, changed)

    def on_jaxlings_app_progress_reloaded(self, event: ProgressReloaded) -> None:
        self.progress = event.progress
        for screen in self.screen_stack:
            refresh = getattr(screen, "progress_changed", None)
            if refresh is not None:
                refresh()

    # -- a terminal too small for the layout --------------------------------------
    def on_resize(self, event: events.Resize) -> None:
        # Runs before App's own handler has recorded the new size.
        self._check_size(event.size.width, event.size.height)

    def on_ready(self) -> None:
        self._check_size()

    def _check_size(self, width: int | None = None, height: int | None = None) -> None:
        width = self.size.width if width is None else width
        height = self.size.height if height is None else height
        small = too_small(width, height)
        notice = next((s for s in self.screen_stack if isinstance(s, TooSmallScreen)), None)
        if small and notice is None:
            self.push_screen(TooSmallScreen())
        elif small and notice is not None and notice.is_mounted:
            notice.update_size(width, height)
        elif not small and notice is not None and self.screen is notice:
            self.pop_screen()

    def action_help(self) -> None:
        from course.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    # -- the course's language, switched while the app runs ------------------------
    def get_system_commands(self, screen: Screen):
        for command in super().get_system_commands(screen):
            # Textual's own commands, said in the language in use (their words: TEXTUAL_COMMANDS).
            yield command._replace(title=_(command.title), help=_(command.help))
        yield SystemCommand(_("Language"), _("Read the course in English or 日本語 (F2)"), self.action_language)

    def action_command_palette(self) -> None:
        from textual.command import CommandPalette

        # Textual's, with its prompt in the language in use.
        if self.use_command_palette and not CommandPalette.is_open(self):
            self.push_screen(CommandPalette(placeholder=_("Search for commands…"), id="--command-palette"))

    def action_language(self) -> None:
        from course.tui.screens.language import LanguageScreen

        if isinstance(self.screen, (LanguageScreen, TooSmallScreen)):
            return

        def chosen(lang: str | None) -> None:
            if lang is not None and lang != i18n.language():
                self.switch_language(lang)

        self.push_screen(LanguageScreen(), chosen)

    def switch_language(self, lang: str) -> None:
        """Speak `lang` from now on: every screen in the stack redraws its words, and the
        choice is saved in the workspace's .jaxlings/ for the next start."""
        i18n.set_language(lang)
        try:
            self.services.save_language(i18n.language())
        except OSError as error:  # the switch still holds for this session
            self.notify(_("The language is not remembered for next time: {error}").format(
                error=error.strerror or error), title=_("Settings not saved"), severity="warning", markup=False)
        self.sub_title = self.course_subtitle()
        screens = list(self.screen_stack)
        # The lab lives on while the learner is elsewhere: it must come back in the new language too.
        if self.is_screen_installed("lab") and self.get_screen("lab") not in screens:
            screens.append(self.get_screen("lab"))
        for screen in screens:
            if not screen.is_mounted:
                continue  # composes in the new language when it first opens
            redraw = getattr(screen, "language_changed", None)
            if redraw is not None:
                redraw()
            # The footers compose their keys again, in the new language.
            screen.refresh_bindings()

    def action_toggle_theme(self) -> None:
        self.theme = LIGHT_THEME if self.theme == DARK_THEME else DARK_THEME

    # -- the one place a failed worker becomes a message ------------------------
    @on(Worker.StateChanged)
    def _app_worker_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.report_worker_error(event.worker)

    def report_worker_error(self, worker: Worker) -> None:
        if worker.error is None:
            return
        self.log.error(worker.error)
        self.notify(
            describe(worker.error),
            title=_("Something went wrong {doing}").format(
                doing=_(worker.description) if worker.description else worker.name),
            severity="error",
            timeout=12,
        )

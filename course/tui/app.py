"""The jaxlings app: course map, lessons, exercises and the training lab."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import App
from textual.binding import Binding
from textual.worker import Worker, WorkerState

from course.tui.commands import CourseCommands
from course.tui.errors import describe
from course.tui.screens.map import MapScreen
from course.tui.services import Services

LIGHT_THEME = "textual-light"
DARK_THEME = "textual-dark"


class JaxlingsApp(App[int]):
    TITLE = "jaxlings"
    SUB_TITLE = "from PyTorch to JAX, Flax and Optax"
    CSS_PATH = ["app.tcss"]
    COMMANDS = App.COMMANDS | {CourseCommands}
    # Below this width the PyTorch and JAX panels stack and the contents pane hides.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("f1,question_mark", "help", "Help", id="help", tooltip="Every key, on every screen"),
        Binding("ctrl+t", "toggle_theme", "Theme", id="theme", tooltip="Switch between light and dark", show=False),
        Binding("ctrl+q", "quit", "Quit", id="quit", priority=True, tooltip="Leave the course (progress is saved)"),
    ]

    def __init__(self, services: Services | None = None, *, theme: str = DARK_THEME) -> None:
        super().__init__()
        self.services = services or Services()
        self.theme = theme
        self.catalog: Any = None
        self.progress: Any = None
        # Training-lab reports live for the session; saving is the learner's choice.
        self.lab_reports: list[Any] = []

    def get_default_screen(self) -> MapScreen:
        return MapScreen()

    def on_unmount(self) -> None:
        self.services.close()

    # -- navigation used by screens and the command palette ---------------------
    def open_lesson(self, lesson_name: str) -> None:
        from course.tui.screens.lesson import LessonScreen

        lesson = next(l for l in self.catalog.lessons if l.name == lesson_name)
        self.push_screen(LessonScreen(lesson))

    def open_exercise(self, exercise_name: str, *, replace: bool = False) -> None:
        from course.tui.screens.exercise import ExerciseScreen

        screen = ExerciseScreen(self.catalog.exercise(exercise_name))
        if replace:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def open_lab(self) -> None:
        from course.tui.screens.lab import LabScreen

        # One lab for the whole session: installed, so a run goes on (and its
        # results stay) while the learner reads a lesson.
        if not self.is_screen_installed("lab"):
            self.install_screen(LabScreen(), "lab")
        lab = self.get_screen("lab")
        if lab in self.screen_stack:
            while self.screen is not lab:
                self.pop_screen()
        else:
            self.push_screen(lab)

    def action_help(self) -> None:
        from course.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

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
            title=f"Something went wrong {worker.description or worker.name}",
            severity="error",
            timeout=12,
        )

"""An exercise: the task, the learner's file in an editor, checks, hints, solution."""

from __future__ import annotations

import ast
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Footer, Header, Markdown, Static, TabbedContent, TabPane, TextArea
from textual.worker import get_current_worker

from course.tui.screens.base import CourseScreen
from course.tui.screens.confirm import ConfirmScreen
from course.tui.watch import watch_file
from course.tui.widgets.results import ResultsView

# Letter keys only work outside the editor, where they cannot be typed into the file.
LETTER_ACTIONS = {"hint", "reset", "solution", "next", "edit", "toggle_auto"}


def task_of(source: str) -> str:
    """The task is the starter's module docstring."""
    try:
        doc = ast.get_docstring(ast.parse(source))
    except SyntaxError:
        doc = None
    return doc or "The task is described in the comments at the top of the file."


def external_editor() -> list[str] | None:
    for var in ("VISUAL", "EDITOR"):
        value = os.environ.get(var, "").strip()
        if value:
            return shlex.split(value)
    for name in ("nano", "vim", "vi", "emacs"):
        if shutil.which(name):
            return [name]
    return None


class ExerciseScreen(CourseScreen):
    BINDINGS = [
        Binding("ctrl+s", "save_check", "Save & check", id="exercise.save", priority=True,
                tooltip="Write the file and run the checks"),
        Binding("ctrl+r,f5", "check", "Check", id="exercise.check", priority=True,
                tooltip="Run the checks on the saved file"),
        Binding("ctrl+o", "external_editor", "My editor", id="exercise.external", priority=True,
                tooltip="Edit in $VISUAL / $EDITOR; the checks run when you save there"),
        Binding("escape", "leave", "Back", id="exercise.back",
                tooltip="Leave the editor (then letter keys work); again: back to the map"),
        Binding("h", "hint", "Hint", id="exercise.hint", tooltip="Reveal the next hint"),
        Binding("s", "solution", "Solution", id="exercise.solution",
                tooltip="Show the reference solution beside your code (after a pass)"),
        Binding("n", "next", "Next", id="exercise.next", tooltip="Open the next exercise (after a pass)"),
        Binding("r", "reset", "Reset", id="exercise.reset", tooltip="Restore the starter file (asks first)"),
        Binding("e", "edit", "Edit", id="exercise.edit", tooltip="Back into the editor"),
        Binding("w", "toggle_auto", "Auto-check", id="exercise.auto", show=False,
                tooltip="Turn checking on every save to disk on or off"),
    ]

    checking: reactive[bool] = reactive(False, bindings=True)
    passed: reactive[bool] = reactive(False, bindings=True)

    @dataclass
    class Opened(Message):
        text: str

    @dataclass
    class FileChanged(Message):
        text: str

    @dataclass
    class CheckDone(Message):
        run: int
        result: Any

    @dataclass
    class HintsChanged(Message):
        level: int

    @dataclass
    class SolutionLoaded(Message):
        text: str

    def __init__(self, exercise: Any) -> None:
        super().__init__()
        self.exercise = exercise
        self.disk_text: str | None = None  # what the file holds, as far as we know
        self.auto_check = True
        self.watch_mode = ""
        self._run = 0

    # -- layout ---------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="exercise-status")
        with Horizontal(id="exercise-code"):
            editor = TextArea.code_editor("", language="python", id="editor", soft_wrap=False)
            editor.border_title = self.exercise.file
            yield editor
            solution = TextArea.code_editor("", language="python", id="solution", read_only=True)
            solution.border_title = "Reference solution"
            yield solution
        with TabbedContent(id="exercise-info", initial="tab-task"):
            with TabPane("Task", id="tab-task"):
                with VerticalScroll():
                    yield Markdown("", id="task")
            with TabPane("Results", id="tab-results"):
                with VerticalScroll():
                    yield ResultsView(id="results")
            with TabPane("Hints", id="tab-hints"):
                with VerticalScroll():
                    yield Static("", id="hints")
        yield Footer()

    def on_mount(self) -> None:
        self.sub_title = f"{self.exercise.name} · {self.app.catalog.lesson_of(self.exercise.name).title}"
        self.passed = self.app.progress.is_done(self.exercise.name)
        self.query_one("#solution").display = False
        self._show_hints()
        self._update_status()
        self._open_file()
        self._warm_up()

    # -- status line ------------------------------------------------------------
    def _update_status(self) -> None:
        if self.checking:
            state = "… checking"
        elif self.passed:
            state = "✓ passed"
        else:
            state = "○ not passed yet"
        dirty = "  [b]● unsaved[/b]" if self._dirty() else ""
        auto = "" if self.auto_check else "  auto-check off (w)"
        self.query_one("#exercise-status", Static).update(
            f"[b]{self.exercise.name}[/b]  {state}{dirty}{auto}"
        )

    def _dirty(self) -> bool:
        return self.disk_text is not None and self.query_one("#editor", TextArea).text != self.disk_text

    def watch_checking(self) -> None:
        if self.is_mounted:
            self._update_status()

    def watch_passed(self) -> None:
        if self.is_mounted:
            self._update_status()

    @on(TextArea.Changed, "#editor")
    def _edited(self) -> None:
        self._update_status()

    # -- loading and watching the file -------------------------------------------
    @work(thread=True, exclusive=True, group="file", exit_on_error=False, description="opening the exercise")
    def _open_file(self) -> None:
        text = self.app.services.read_text(self.exercise.exercise_path())
        self.post_message(self.Opened(text))

    def on_exercise_screen_opened(self, event: Opened) -> None:
        self._load_editor(event.text)
        self.query_one("#task", Markdown).update(task_of(event.text))
        self.query_one("#editor").focus()
        results = self.query_one(ResultsView)
        results.show_idle("Saving in your own editor (Ctrl+O) checks too.")
        self._watch()

    def _load_editor(self, text: str) -> None:
        self.disk_text = text
        editor = self.query_one("#editor", TextArea)
        if editor.text != text:
            editor.load_text(text)
        self._update_status()

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False, description="watching the file")
    def _watch(self) -> None:
        worker = get_current_worker()
        mode = watch_file(
            self.exercise.exercise_path(),
            worker.cancelled_event,
            lambda text: self.post_message(self.FileChanged(text)),
        )
        self.watch_mode = mode

    def on_exercise_screen_file_changed(self, event: FileChanged) -> None:
        if event.text == self.disk_text:
            return  # our own save, already being checked
        if self._dirty():
            self.disk_text = event.text
            self.notify(
                "The file changed on disk while you had unsaved edits here. "
                "Your edits are kept; Ctrl+S overwrites the file with them.",
                title="File changed",
                severity="warning",
            )
            self._update_status()
            return
        self._load_editor(event.text)
        if self.auto_check:
            self._start_check()

    @work(thread=True, exclusive=True, group="warm", exit_on_error=False, description="starting the checker")
    def _warm_up(self) -> None:
        self.app.services.warm_up_checks()
        notice = self.app.services.isolation_notice()
        if notice and not getattr(self.app, "_isolation_noticed", False):
            self.app._isolation_noticed = True  # once per app, not per exercise
            self.app.call_from_thread(self.notify, notice, title="No sandbox", severity="warning", timeout=15)

    # -- checks -----------------------------------------------------------------
    def action_save_check(self) -> None:
        text = self.query_one("#editor", TextArea).text
        # Recorded before the write so the watcher recognises the change as ours.
        self.disk_text = text
        self._update_status()
        self._save_and_check(text)

    @work(thread=True, exclusive=True, group="file", exit_on_error=False, description="saving your file")
    def _save_and_check(self, text: str) -> None:
        self.app.services.write_text(self.exercise.exercise_path(), text)
        self.app.call_from_thread(self._start_check)

    def action_check(self) -> None:
        if self._dirty():
            self.notify("Checking the saved file; Ctrl+S saves your edits first.", title="Unsaved edits")
        self._start_check()

    def _start_check(self) -> None:
        self._run += 1
        self.checking = True
        self.query_one(ResultsView).show_running()
        self.query_one(TabbedContent).active = "tab-results"
        self._check(self._run)

    @work(thread=True, exclusive=True, group="check", exit_on_error=False, description="checking your code")
    def _check(self, run: int) -> None:
        result = None
        try:
            result = self.app.services.run_check(self.exercise)
            self.app.progress.record(result)
        finally:
            # A check that raised still has to end the "checking" state.
            self.post_message(self.CheckDone(run, result))

    def on_exercise_screen_check_done(self, event: CheckDone) -> None:
        if event.run != self._run:
            return  # superseded by a later save
        self.checking = False
        if event.result is None:
            self.query_one(ResultsView).update("✗ The check could not run; see the message above.")
            return
        self.query_one(ResultsView).show_result(event.result)
        if event.result.passed:
            self.passed = True
            self.notify("All checks pass. Press n for the next exercise.", title=f"✓ {self.exercise.name}")
        else:
            self.passed = self.app.progress.is_done(self.exercise.name)

    # -- hints --------------------------------------------------------------------
    def _show_hints(self) -> None:
        hints = list(self.exercise.hints or [])
        level = self.app.progress.hint_level(self.exercise.name)
        shown = hints[:level]
        lines = [f"[b]Hint {i}.[/b] {h}" for i, h in enumerate(shown, start=1)]
        left = len(hints) - len(shown)
        if not hints:
            lines.append("This exercise has no hints.")
        elif left:
            lines.append(f"[dim]{left} more hint{'s' if left > 1 else ''}: press h (outside the editor).[/dim]")
        else:
            lines.append("[dim]That was the last hint.[/dim]")
        from textual.content import Content

        self.query_one("#hints", Static).update(
            Content("\n\n").join(Content.from_markup(line) for line in lines)
        )

    def action_hint(self) -> None:
        hints = list(self.exercise.hints or [])
        if self.app.progress.hint_level(self.exercise.name) >= len(hints):
            self.query_one(TabbedContent).active = "tab-hints"
            self.notify("No more hints for this exercise." if hints else "This exercise has no hints.")
            return
        self._reveal_hint()

    @work(thread=True, exclusive=True, group="hint", exit_on_error=False, description="revealing a hint")
    def _reveal_hint(self) -> None:
        level = self.app.progress.reveal_hint(self.exercise.name, len(self.exercise.hints))
        self.post_message(self.HintsChanged(level))

    def on_exercise_screen_hints_changed(self, event: HintsChanged) -> None:
        self._show_hints()
        self.query_one(TabbedContent).active = "tab-hints"

    # -- solution -------------------------------------------------------------------
    def action_solution(self) -> None:
        solution = self.query_one("#solution", TextArea)
        if solution.display:
            solution.display = False
            return
        if not self.passed:
            self.notify("The reference solution opens once your code passes its checks.", title="Not yet")
            return
        self._load_solution()

    @work(thread=True, exclusive=True, group="solution", exit_on_error=False, description="opening the solution")
    def _load_solution(self) -> None:
        self.post_message(self.SolutionLoaded(self.app.services.read_text(self.exercise.solution_path())))

    def on_exercise_screen_solution_loaded(self, event: SolutionLoaded) -> None:
        solution = self.query_one("#solution", TextArea)
        solution.load_text(event.text)
        solution.display = True

    # -- reset ------------------------------------------------------------------------
    def action_reset(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes:
                self._reset()

        self.app.push_screen(
            ConfirmScreen(
                f"Reset [b]{self.exercise.file}[/b] to its starter code?\n"
                "Your changes to this file will be lost.",
                yes="Reset",
                no="Keep my code",
            ),
            answered,
        )

    @work(thread=True, exclusive=True, group="file", exit_on_error=False, description="resetting the exercise")
    def _reset(self) -> None:
        self.app.services.restore_starter(self.exercise)
        text = self.app.services.read_text(self.exercise.exercise_path())
        self.app.call_from_thread(self._after_reset, text)

    def _after_reset(self, text: str) -> None:
        self.disk_text = None
        self._load_editor(text)
        self.query_one("#solution").display = False
        self.query_one(ResultsView).show_idle("The starter code is back.")
        self.query_one(TabbedContent).active = "tab-task"
        self.notify(f"{self.exercise.file} is back to its starter code.", title="Reset")

    # -- elsewhere ------------------------------------------------------------------------
    def action_next(self) -> None:
        if not self.passed:
            self.notify("The next exercise opens after this one passes. Ctrl+P jumps anywhere.", title="Not yet")
            return
        nxt = self.app.progress.next_pending(self.app.catalog)
        if nxt is None:
            self.notify("Every exercise passes. The training lab is on the map (l).", title="✓ Course complete")
            return
        self._save_if_dirty()
        self.app.open_exercise(nxt.name, replace=True)

    def action_edit(self) -> None:
        self.query_one("#editor").focus()

    def action_toggle_auto(self) -> None:
        self.auto_check = not self.auto_check
        self._update_status()

    def action_leave(self) -> None:
        if self.focused is self.query_one("#editor"):
            self.query_one(TabbedContent).query_one("Tabs").focus()
            return
        self._save_if_dirty()
        self.app.pop_screen()

    def _save_if_dirty(self) -> None:
        if self._dirty():
            text = self.query_one("#editor", TextArea).text
            self.disk_text = text
            # A few kilobytes, written once as the screen closes: not worth a worker
            # that would die with the screen.
            self.app.services.write_text(self.exercise.exercise_path(), text)
            self.notify(f"Saved your changes to {self.exercise.file}.")

    def action_external_editor(self) -> None:
        command = external_editor()
        if command is None:
            self.notify("Set $EDITOR (for example: export EDITOR=nano).", title="No editor found", severity="warning")
            return
        self._save_if_dirty()
        from textual.app import SuspendNotSupported

        try:
            with self.app.suspend():
                subprocess.run([*command, str(self.exercise.exercise_path())], check=False)
        except SuspendNotSupported:
            self.notify("This terminal cannot hand over to another program.", severity="warning")
            return
        except OSError as error:
            self.notify(f"Could not start {command[0]}: {error}", severity="error")
            return
        # The watcher sees the change too; reading now just makes the result immediate.
        self._reload_after_external()

    @work(thread=True, exclusive=True, group="file", exit_on_error=False, description="reading your file")
    def _reload_after_external(self) -> None:
        self.post_message(self.FileChanged(self.app.services.read_text(self.exercise.exercise_path())))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("check", "save_check") and self.checking:
            return False
        if action in LETTER_ACTIONS and self.is_mounted:
            editor = self.query("#editor")
            if editor and self.focused is editor.first():
                return False
        if action in ("solution", "next") and not self.passed:
            return None
        return True

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def on_descendant_blur(self) -> None:
        self.refresh_bindings()

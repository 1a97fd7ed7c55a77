"""An exercise: the task, the learner's file in an editor, checks, hints, solution.

The file on disk changes only when the learner asks: Ctrl+S, or "Save" in the
question asked on leaving with unsaved edits. Bare-letter keys act only while
the editor does not have the focus, and the screen opens with the focus
outside the editor, so no key the footer shows can type into the file.
Edits that are dropped (Discard, or a reset) are first kept under
.jaxlings/recovery/, and a reset can be undone: u restores the last backup.
"""

from __future__ import annotations

import ast
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Header, Markdown, Static, TabbedContent, TabPane, Tabs
from textual.worker import get_current_worker

from course.i18n import N_, _, content, ngettext
from course.tui.autosave import EditorAutosave
from course.tui.screens.base import CourseScreen
from course.tui.screens.confirm import ConfirmScreen
from course.tui.screens.unsaved import DISCARD, SAVE, UnsavedScreen
from course.tui.statement import statement_markdown
from course.tui.watch import watch_file
from course.tui.widgets.diff import DiffView
from course.tui.widgets.editor import CodeEditor
from course.tui.widgets.footer import CourseFooter
from course.tui.widgets.results import ResultsView

# Letter keys only work outside the editor, where they cannot be typed into the file.
LETTER_ACTIONS = {"hint", "reset", "solution", "next", "edit", "toggle_auto", "goto_failure", "restore", "lesson"}


def task_of(source: str) -> str:
    """The task is the starter's module docstring."""
    try:
        doc = ast.get_docstring(ast.parse(source))
    except SyntaxError:
        doc = None
    return doc or _("The task is described in the comments at the top of the file.")


def translated_task(exercise: Any, source: str) -> str:
    """The task in the language in use. The catalog is keyed by the statement the course
    ships, so a learner who edited the docstring still reads the translation of the original."""
    from course import i18n
    from course.workspace import ResetError, pristine_starter

    english = task_of(source)
    shipped_in = _starter_language_of(exercise, english)
    if shipped_in == i18n.language():  # the statement of the starter in this language, as shipped
        return unwrap_cjk(english)
    if shipped_in is not None:  # another language's starter: the English statement is the catalog's key
        try:
            english = task_of(pristine_starter(exercise, i18n.DEFAULT))
        except (ResetError, OSError, ValueError):
            pass
    if i18n.language() == i18n.DEFAULT:
        return english
    if i18n.content(english) != english:  # the docstring as shipped: no need to look for the original
        return unwrap_cjk(i18n.content(english))
    try:  # edited: the original comes from the course (or `git show`, hence only now)
        shipped = ast.get_docstring(ast.parse(pristine_starter(exercise, i18n.DEFAULT)))
    except (ResetError, OSError, ValueError, SyntaxError):
        return english
    return unwrap_cjk(i18n.content(shipped)) if shipped else english


def _starter_language_of(exercise: Any, task: str) -> str | None:
    """The language (other than English) whose shipped starter has `task` as its statement, or None."""
    from course.workspace import starter_languages, translated_starter_path

    for lang in starter_languages(exercise)[1:]:
        try:
            if task_of(translated_starter_path(exercise, lang).read_text(encoding="utf-8")) == task:
                return lang
        except (OSError, ValueError):
            continue
    return None


_CJK = "\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef"  # kana, kanji, CJK and full-width punctuation


def unwrap_cjk(markdown: str) -> str:
    """Join the lines of a paragraph that break inside a Japanese sentence.

    Markdown reads a line break inside a paragraph as a space: right between English words,
    a stray gap between two Japanese characters or after 「、」「。」. Code blocks and lines
    of different paragraphs or list items stay as they are."""
    from markdown_it import MarkdownIt

    paragraph: dict[int, int] = {}
    for token in MarkdownIt("gfm-like").parse(markdown):
        if token.type == "paragraph_open" and token.map:
            for number in range(*token.map):
                paragraph[number] = token.map[0]
    joined: list[str] = []
    for number, line in enumerate(markdown.split("\n")):
        same = number in paragraph and paragraph.get(number - 1) == paragraph[number]
        if same and (re.search("[、。]$", joined[-1]) or (
                re.search(f"[{_CJK}]$", joined[-1]) and re.match(f"\\s*[{_CJK}]", line))):
            joined[-1] += line.lstrip()
        else:
            joined.append(line)
    return "\n".join(joined)


def _short_path(path: Path) -> str:
    """The path from the workspace's .jaxlings/ on, which says where it is in fewer columns."""
    parts = Path(path).parts
    return str(Path(*parts[parts.index(".jaxlings"):])) if ".jaxlings" in parts else str(path)


def escape_markup(text: str) -> str:
    from textual.markup import escape

    return escape(text)


def failing_line(result: Any) -> int | None:
    """The line of the learner's file that the failed check points at: the result's own field,
    the same in every language (the message says it in words that a translation changes)."""
    line = getattr(result, "line", None)
    if line is None:
        line = next((c.line for c in (result.checks or []) if c.outcome != "passed"
                     and getattr(c, "line", None) is not None), None)
    return line if isinstance(line, int) and not isinstance(line, bool) and line > 0 else None


class ExerciseScreen(CourseScreen):
    BINDINGS = [
        Binding("ctrl+s", "save_check", N_("Save+check"), id="exercise.save", priority=True,
                tooltip=N_("Write the file and run the checks")),
        Binding("ctrl+r,f5", "check", N_("Check"), id="exercise.check", priority=True, show=False,
                tooltip=N_("Run the checks on the saved file")),
        Binding("ctrl+g", "goto_line", N_("Line"), id="exercise.goto", priority=True, show=False,
                tooltip=N_("Jump to a line of your file (the failing line, after a failed check)")),
        Binding("ctrl+o", "external_editor", N_("Editor"), id="exercise.external", priority=True,
                tooltip=N_("Edit in $VISUAL / $EDITOR; the checks run when you save there")),
        Binding("escape", "leave", N_("Back"), id="exercise.back", priority=True,
                tooltip=N_("In the editor: leave it without typing (letter keys then work); "
                        "outside it: back to the map (asks about unsaved edits)")),
        Binding("e,enter", "edit", N_("Edit"), id="exercise.edit", tooltip=N_("Into the editor")),
        Binding("h", "hint", N_("Hint"), id="exercise.hint", tooltip=N_("Reveal the next hint")),
        Binding("s", "solution", N_("Solution"), id="exercise.solution",
                tooltip=N_("The reference solution as a diff against your code (after a pass)")),
        Binding("n", "next", N_("Next"), id="exercise.next",
                tooltip=N_("After a pass, what comes next in the course: the next lesson if you have not opened it, "
                           "else the next exercise not done")),
        Binding("l", "lesson", N_("Lesson"), id="exercise.lesson", show=False,
                tooltip=N_("Read this exercise's lesson")),
        Binding("r", "reset", N_("Reset"), id="exercise.reset",
                tooltip=N_("Restore the starter file and mark the exercise pending (asks first; keeps a backup)")),
        Binding("u", "restore", N_("Undo reset"), id="exercise.restore", show=False,
                tooltip=N_("Put back the copy of your code that the last reset kept (asks first)")),
        Binding("g", "goto_failure", N_("Failing line"), id="exercise.failure", show=False,
                tooltip=N_("Into the editor, on the line the last failed check points at")),
        Binding("w", "toggle_auto", N_("Auto-check"), id="exercise.auto", show=False,
                tooltip=N_("Turn checking on every save to disk on or off")),
        # The app's Ctrl+Q, kept out of this footer: at 80 columns the keys above need the room.
        Binding("ctrl+q", "app.quit", N_("Quit"), id="exercise.quit", priority=True, show=False,
                tooltip=N_("Leave the course (asks about unsaved edits)")),
    ]

    checking: reactive[bool] = reactive(False, bindings=True)
    passed: reactive[bool] = reactive(False, bindings=True)

    @dataclass
    class Opened(Message):
        text: str | None
        error: str | None

    @dataclass
    class FileChanged(Message):
        text: str

    class FileUnreadable(Message):
        """The file on disk changed into something this editor must not save over."""

    @dataclass
    class Saved(Message):
        text: str
        error: str | None

    @dataclass
    class CheckDone(Message):
        run: int
        result: Any

    @dataclass
    class CheckLanded(Message):
        """One test's outcome, while the rest of the check still runs."""
        run: int
        outcome: Any

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
        self.load_error: str | None = None  # why the file is not open for editing
        self.saving_text: str | None = None  # being written by us: the watcher ignores it
        self.failure_line: int | None = None
        self.last_check_failed = False
        self.resetting = False  # our own reset is writing the file
        self.solution_text: str | None = None
        self.backup: Path | None = None  # the newest copy a reset kept: what u puts back
        self.auto_check = True
        self.watch_mode = ""
        self.budget: float | None = None
        self._check_started = 0.0
        self._run = 0
        self._landed: list = []  # the running check's outcomes so far
        # What the results panel shows, kept so it can be said again in another language.
        self._results: tuple[str, Any] = ("idle", N_("Saving in your own editor (Ctrl+O) checks too."))
        # Unsaved edits outlive a closed terminal or a crash: copied to .jaxlings/recovery/ as they are typed.
        self.autosave = EditorAutosave(self)

    # -- layout ---------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("", id="exercise-status")
        yield Static("", id="exercise-backup")
        with Horizontal(id="exercise-code"):
            editor = CodeEditor.code_editor("", language="python", id="editor", soft_wrap=False)
            editor.border_title = self.exercise.file
            yield editor
            yield Static("", id="load-error")
            with VerticalScroll(id="solution") as solution:
                solution.border_title = _("Solution vs. your code")
                yield DiffView(id="solution-diff")
        with TabbedContent(id="exercise-info", initial="tab-task"):
            with TabPane(_("Task"), id="tab-task"):
                with VerticalScroll():
                    yield Markdown("", id="task")
            with TabPane(_("Results"), id="tab-results"):
                with VerticalScroll():
                    yield ResultsView(id="results")
            with TabPane(_("Hints"), id="tab-hints"):
                with VerticalScroll():
                    yield Static("", id="hints")
        # At 80 columns the letter keys must fit beside the Ctrl keys: compact, and
        # Ctrl+P (the same on every screen) is left to the map's footer and the help.
        yield CourseFooter(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = f"{self.exercise.name} · {content(self.app.catalog.lesson_of(self.exercise.name).title)}"
        self.passed = self.app.progress.is_done(self.exercise.name)
        self.query_one("#solution").display = False
        self.query_one("#load-error").display = False
        self.query_one("#exercise-backup").display = False
        self.query_one("#editor").read_only = True  # until the file has loaded
        self._show_hints()
        self._update_status()
        self._leave_editor()
        self._open_file()
        self._find_backup()
        self._warm_up()

    @property
    def editor(self) -> CodeEditor:
        return self.query_one("#editor", CodeEditor)

    def editor_focused(self) -> bool:
        return self.is_mounted and self.focused is self.editor

    def _leave_editor(self) -> None:
        """Focus the tabs: a place where letter keys are actions, not text."""
        self.query_one("#exercise-info").query_one(Tabs).focus()

    # -- status line ------------------------------------------------------------
    def _update_status(self) -> None:
        if self.checking:
            elapsed = time.monotonic() - self._check_started
            if self.budget:
                state = _("… checking {elapsed} s of {limit} s allowed").format(
                    elapsed=f"{elapsed:.0f}", limit=f"{self.budget:g}")
            else:
                state = _("… checking {elapsed} s").format(elapsed=f"{elapsed:.0f}")
        elif self.passed and self.last_check_failed:
            # Done stays done (progress never un-passes), but this code does not pass now.
            state = _("✓ passed before · ✗ the last check failed")
        elif self.passed:
            state = _("✓ passed")
        else:
            state = _("○ not passed yet")
        dirty = "  " + _("[b]● unsaved[/b]") if self.dirty() else ""
        auto = "" if self.auto_check else "  " + _("auto-check off (w)")
        broken = "  " + _("[b]✗ not opened[/b]") if self.load_error else ""
        self.query_one("#exercise-status", Static).update(
            f"[b]{self.exercise.name}[/b]  {state}{dirty}{broken}{auto}"
        )

    def dirty(self) -> bool:
        return (
            self.is_mounted
            and self.load_error is None
            and self.disk_text is not None
            and self.editor.text != self.disk_text
        )

    def watch_checking(self, checking: bool) -> None:
        if not self.is_mounted:
            return
        if checking:
            self._check_started = time.monotonic()
            self._ticker = self.set_interval(1.0, self._update_status)
        elif getattr(self, "_ticker", None) is not None:
            self._ticker.stop()
            self._ticker = None
        self._update_status()

    def watch_passed(self) -> None:
        if self.is_mounted:
            self._update_status()

    @on(CodeEditor.Changed, "#editor")
    def _edited(self) -> None:
        self._update_status()
        self.autosave.changed()

    # -- loading and watching the file -------------------------------------------
    @work(thread=True, exclusive=True, group="file", exit_on_error=False, description=N_("opening the exercise"))
    def _open_file(self) -> None:
        self.app.services.localize_starter(self.exercise, self.app.progress)  # before anything reads it
        text, error = self.app.services.read_learner_file(self.exercise.exercise_path())
        self.post_message(self.Opened(text, error))

    def on_exercise_screen_opened(self, event: Opened) -> None:
        self._show_results("idle", N_("Saving in your own editor (Ctrl+O) checks too."))
        self._watch()
        if event.error is not None:
            self._show_load_error(event.error)
            return
        self._load_editor(event.text)
        self.autosave.offer(event.text)

    def _show_load_error(self, error: str) -> None:
        """The file stays on disk as it is: no buffer exists that could be saved over it."""
        self.load_error = error
        self.disk_text = None
        editor = self.editor
        editor.read_only = True
        editor.display = False
        if self.focused is editor:
            self._leave_editor()
        message = self.query_one("#load-error", Static)
        message.update(Content(_("✗ {file} is not open for editing.").format(file=self.exercise.file) + f"\n\n{error}"))
        message.display = True
        self.query_one("#task", Markdown).update(
            _("The task is in the file's docstring, which could not be read. See the message above.")
        )
        self._update_status()

    def _load_editor(self, text: str) -> None:
        first = self.disk_text is None
        self.load_error = None
        self.query_one("#load-error").display = False
        editor = self.editor
        editor.display = True
        editor.read_only = False
        self.disk_text = text
        if editor.text != text:
            editor.load_text(text)
        self.autosave.changed()
        if first:
            self.query_one("#task", Markdown).update(statement_markdown(translated_task(self.exercise, text)))
        self._update_status()

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False, description=N_("watching the file"))
    def _watch(self) -> None:
        worker = get_current_worker()
        mode = watch_file(
            self.exercise.exercise_path(),
            worker.cancelled_event,
            lambda text: self.post_message(self.FileChanged(text)),
            lambda: self.post_message(self.FileUnreadable()),
        )
        self.watch_mode = mode

    @work(thread=True, exclusive=True, group="reread", exit_on_error=False, description=N_("reading your file"))
    def on_exercise_screen_file_unreadable(self, event: FileUnreadable) -> None:
        text, error = self.app.services.read_learner_file(self.exercise.exercise_path())
        if error is None:
            self.post_message(self.FileChanged(text))
        else:
            self.app.call_from_thread(self._file_went_bad, error)

    def _file_went_bad(self, error: str) -> None:
        if self.dirty():
            # The learner's edits live only here now: keep them (still marked unsaved).
            self.notify(
                error + " " + _("Your edits here are kept; Ctrl+S writes them as UTF-8."),
                title=_("File changed on disk"),
                severity="warning",
                timeout=15,
                markup=False,
            )
            return
        self._show_load_error(error)

    def on_exercise_screen_file_changed(self, event: FileChanged) -> None:
        if event.text == self.disk_text or event.text == self.saving_text or self.resetting:
            return  # our own save (already being checked) or our own reset
        if self.dirty():
            self.disk_text = event.text
            self.notify(
                _("The file changed on disk while you had unsaved edits here. "
                  "Your edits are kept; Ctrl+S overwrites the file with them."),
                title=_("File changed"),
                severity="warning",
            )
            self._update_status()
            self.autosave.changed()
            return
        self._load_editor(event.text)
        if self.auto_check:
            self._start_check()

    @work(thread=True, exclusive=True, group="warm", exit_on_error=False, description=N_("starting the checker"))
    def _warm_up(self) -> None:
        self.budget = self.app.services.check_budget(self.exercise)
        self.app.services.warm_up_checks(self.exercise)
        notice = self.app.services.isolation_notice()
        if notice and not getattr(self.app, "_isolation_noticed", False):
            self.app._isolation_noticed = True  # once per app, not per exercise
            self.app.call_from_thread(self.notify, notice, title=_("No sandbox"), severity="warning", timeout=15)

    # -- saving -----------------------------------------------------------------
    def action_save_check(self) -> None:
        if self.load_error is not None:
            self.notify(self.load_error, title=_("Nothing saved"), severity="error", timeout=10, markup=False)
            return
        if self.disk_text is None:
            return  # still loading: there is nothing of the learner's to save yet
        text = self.editor.text
        self.saving_text = text
        self._save(text)

    @work(thread=True, exclusive=True, group="file", exit_on_error=False, description=N_("saving your file"))
    def _save(self, text: str) -> None:
        self.post_message(self.Saved(text, self._write(text)))

    def _write(self, text: str) -> str | None:
        """Write the file; the reason it failed, or None."""
        try:
            self.app.services.write_text(self.exercise.exercise_path(), text)
        except OSError as error:
            return _("{file} was not saved: {error}.").format(file=self.exercise.file, error=error.strerror or error)
        return None

    def on_exercise_screen_saved(self, event: Saved) -> None:
        self.saving_text = None
        if event.error is not None:
            # The marker stays: the file on disk does not hold these edits.
            self.notify(event.error + " " + _("Your edits are still here."), title=_("Not saved"), severity="error",
                        timeout=12, markup=False)
            self._update_status()
            return
        self.disk_text = event.text
        self._update_status()
        self.autosave.changed()
        self._start_check()

    def save_now(self) -> bool:
        """Save synchronously (a few kilobytes, when leaving). False: it failed, and
        the learner has been told why."""
        text = self.editor.text
        error = self._write(text)
        if error is not None:
            self.notify(error + " " + _("You are still on this exercise."), title=_("Not saved"), severity="error",
                        timeout=12, markup=False)
            return False
        self.disk_text = text
        self._update_status()
        self.autosave.changed()
        return True

    def confirm_leave(self, then: Callable[[], None], doing: str | None = None) -> None:
        """Run `then` once the learner's edits are safe: saved, dropped on purpose,
        or there were none. Cancel leaves everything as it was."""
        if not self.dirty():
            then()
            return

        def answered(answer: str | None) -> None:
            if answer == SAVE and self.save_now():
                then()
            elif answer == DISCARD and self.keep_unsaved():
                self.editor.load_text(self.disk_text)
                self.autosave.changed()
                then()

        self.app.push_screen(UnsavedScreen(self.exercise.file, doing or _("leaving")), answered)

    def keep_unsaved(self) -> bool:
        """Copy the unsaved edits to .jaxlings/recovery/ before they are dropped. False:
        the copy failed, the learner has been told, and nothing may be dropped."""
        if not self.dirty():
            return True
        try:
            kept = self.app.services.keep_unsaved(self.exercise, self.editor.text)
        except OSError as error:
            self.notify(_("Your unsaved edits could not be copied to .jaxlings/recovery/ ({error}), "
                          "so they were not dropped.").format(error=error.strerror or error),
                        title=_("Nothing discarded"), severity="error", timeout=15, markup=False)
            return False
        self.notify(_("Your unsaved edits are kept in {path}.").format(path=kept), title=_("Edits discarded"),
                    timeout=15, markup=False)
        return True

    # -- checks -----------------------------------------------------------------
    def action_check(self) -> None:
        if self.dirty():
            self.notify(_("Checking the saved file; Ctrl+S saves your edits first."), title=_("Unsaved edits"))
        self._start_check()

    def _start_check(self) -> None:
        self._run += 1
        self._landed = []
        self.checking = True
        self._show_results("running", self.budget)
        self.query_one(TabbedContent).active = "tab-results"
        self._check(self._run)

    @work(thread=True, exclusive=True, group="check", exit_on_error=False, description=N_("checking your code"))
    def _check(self, run: int) -> None:
        result = None
        try:
            result = self.app.services.run_check(
                self.exercise, on_outcome=lambda outcome: self.post_message(self.CheckLanded(run, outcome)))
            self.app.progress.record(result)
        finally:
            # A check that raised still has to end the "checking" state.
            self.post_message(self.CheckDone(run, result))

    def on_exercise_screen_check_landed(self, event: CheckLanded) -> None:
        if event.run != self._run or not self.checking:
            return  # a check that was superseded, or whose verdict is already shown
        self._landed.append(event.outcome)
        self._show_results("running", self.budget, tuple(self._landed))

    def on_exercise_screen_check_done(self, event: CheckDone) -> None:
        if event.run != self._run:
            return  # superseded by a later save
        self.checking = False
        if event.result is None:
            self._show_results("text", N_("✗ The check could not run; see the message above."))
            return
        self.last_check_failed = not event.result.passed
        self.failure_line = None if event.result.passed else failing_line(event.result)
        self._show_results("result", (event.result, self.failure_line))
        if event.result.passed:
            self.passed = True
            self.notify(_("All checks pass. n (outside the editor) opens what comes next."),
                        title=f"✓ {self.exercise.name}")
        else:
            self.passed = self.app.progress.is_done(self.exercise.name)
        self._update_status()

    def _show_results(self, kind: str, value: Any, landed: tuple = ()) -> None:
        self._results = (kind, value, landed) if landed else (kind, value)
        view = self.query_one(ResultsView)
        if kind == "idle":
            view.show_idle(_(value))
        elif kind == "running":
            view.show_running(value, landed)
        elif kind == "result":
            view.show_result(*value)
        else:
            view.update(_(value))

    def language_changed(self) -> None:
        """Say everything on this screen again in the language now in use; the
        editor and its unsaved edits are left exactly as they are."""
        self.sub_title = f"{self.exercise.name} · {content(self.app.catalog.lesson_of(self.exercise.name).title)}"
        tabs = self.query_one(TabbedContent)
        for pane, label in (("tab-task", N_("Task")), ("tab-results", N_("Results")), ("tab-hints", N_("Hints"))):
            tabs.get_tab(pane).label = _(label)
        self.query_one("#solution").border_title = _("Solution vs. your code")
        if self.load_error is not None:
            self._show_load_error(self.load_error)
        elif self.disk_text is not None:
            self.query_one("#task", Markdown).update(statement_markdown(translated_task(self.exercise, self.disk_text)))
        self._show_results(*self._results)
        self._show_hints()
        if self.solution_text is not None and self.query_one("#solution").display:
            self.on_exercise_screen_solution_loaded(self.SolutionLoaded(self.solution_text))
        self._update_status()

    def progress_changed(self) -> None:
        """The progress file changed (a check here, or `jaxlings` in another terminal)."""
        self.passed = self.app.progress.is_done(self.exercise.name)
        self._show_hints()

    # -- lines ----------------------------------------------------------------------
    def action_goto_line(self) -> None:
        if self.load_error is not None or self.disk_text is None:
            return
        from course.tui.screens.goto import GotoLineScreen

        def answered(line: int | None) -> None:
            if line is not None:
                self.goto_line(line)

        self.app.push_screen(GotoLineScreen(self.editor.document.line_count, self.failure_line), answered)

    def action_jump_to_line(self, line: int) -> None:
        """The link to the failing line in the results."""
        self.goto_line(line)

    def goto_line(self, line: int) -> None:
        """Into the editor at `line`."""
        if self.load_error is not None or self.disk_text is None:
            return
        editor = self.editor
        editor.focus()
        editor.go_to_line(int(line))

    def action_goto_failure(self) -> None:
        if self.failure_line is None:
            self.notify(_("The last check did not point at a line of your file. Ctrl+G goes to any line."))
            return
        self.goto_line(self.failure_line)

    # -- hints --------------------------------------------------------------------
    def _show_hints(self) -> None:
        from textual.markup import escape

        hints = list(self.exercise.hints or [])
        level = self.app.progress.hint_level(self.exercise.name)
        # Hints are plain text: `x.at[index]` is code, not a markup tag to swallow.
        shown = [escape(content(h)) for h in hints[:level]]
        lines = [_("[b]Hint {number}.[/b] {hint}").format(number=i, hint=h) for i, h in enumerate(shown, start=1)]
        left = len(hints) - len(shown)
        if not hints:
            lines.append(_("This exercise has no hints."))
        elif left:
            lines.append("[dim]" + ngettext("{count} more hint: press h (outside the editor).",
                                            "{count} more hints: press h (outside the editor).", left).format(count=left)
                         + "[/dim]")
        else:
            lines.append("[dim]" + _("That was the last hint.") + "[/dim]")

        self.query_one("#hints", Static).update(
            Content("\n\n").join(Content.from_markup(line) for line in lines)
        )

    def action_hint(self) -> None:
        hints = list(self.exercise.hints or [])
        if self.app.progress.hint_level(self.exercise.name) >= len(hints):
            self.query_one(TabbedContent).active = "tab-hints"
            self.notify(_("No more hints for this exercise.") if hints else _("This exercise has no hints."))
            return
        self._reveal_hint()

    @work(thread=True, exclusive=True, group="hint", exit_on_error=False, description=N_("revealing a hint"))
    def _reveal_hint(self) -> None:
        level = self.app.progress.reveal_hint(self.exercise.name, len(self.exercise.hints))
        self.post_message(self.HintsChanged(level))

    def on_exercise_screen_hints_changed(self, event: HintsChanged) -> None:
        self._show_hints()
        self.query_one(TabbedContent).active = "tab-hints"

    # -- solution -------------------------------------------------------------------
    def action_solution(self) -> None:
        solution = self.query_one("#solution")
        if solution.display:
            self._close_solution()
            return
        if not self.passed:
            self.notify(_("The reference solution opens once your code passes its checks."), title=_("Not yet"))
            return
        self._load_solution()

    @work(thread=True, exclusive=True, group="solution", exit_on_error=False, description=N_("opening the solution"))
    def _load_solution(self) -> None:
        self.post_message(self.SolutionLoaded(self.app.services.read_text(self.exercise.solution_path())))

    def on_exercise_screen_solution_loaded(self, event: SolutionLoaded) -> None:
        self.solution_text = event.text
        mine = self.editor.text if self.load_error is None else ""
        first = self.query_one(DiffView).show(mine, event.text)
        pane = self.query_one("#solution", VerticalScroll)
        opening = not pane.display
        pane.display = True
        self.add_class("-solution-open")
        if self.has_class("-narrow"):
            # The diff needs every column: the editor steps aside (its buffer stays as it is).
            self.editor.display = False
            self.query_one("#load-error").display = False
        if opening:
            # The pane takes the keys (PageDown, arrows) and opens on the first difference.
            pane.focus()
            self.call_after_refresh(pane.scroll_to, y=max(first - 2, 0), animate=False)

    def _close_solution(self) -> None:
        pane = self.query_one("#solution")
        focused = self.focused is pane
        pane.display = False
        self.remove_class("-solution-open")
        self.editor.display = self.load_error is None
        self.query_one("#load-error").display = self.load_error is not None
        if focused:
            # The tabs are back only once the styles have been applied again.
            self.call_after_refresh(self._leave_editor)

    # -- reset ------------------------------------------------------------------------
    def action_reset(self) -> None:
        def answered(yes: bool | None) -> None:
            if yes and self.keep_unsaved():
                # The reset's own write is not a learner's save: no check for it.
                self.resetting = True
                self._reset()

        self.app.push_screen(
            ConfirmScreen(
                _("Reset [b]{file}[/b] to its starter code?\n"
                  "The exercise becomes pending again (its passes stay in your history). Your saved file "
                  "is kept as a backup under .jaxlings/backups/ and u puts it back; unsaved edits here "
                  "are kept under .jaxlings/recovery/.").format(file=self.exercise.file),
                yes=_("Reset"),
                no=_("Keep my code"),
            ),
            answered,
        )

    @work(thread=True, exclusive=True, group="file", exit_on_error=False, description=N_("resetting the exercise"))
    def _reset(self) -> None:
        try:
            backup, progress = self.app.services.reset_exercise(self.exercise, self.app.progress)
            text, error = self.app.services.read_learner_file(self.exercise.exercise_path())
            self.app.call_from_thread(self._after_reset, text, error, backup, progress)
        finally:
            self.app.call_from_thread(setattr, self, "resetting", False)

    def _after_reset(self, text: str | None, error: str | None, backup: Path | None, progress: Any,
                     restored: bool = False) -> None:
        self.app.progress = progress
        self.disk_text = None
        self.failure_line = None
        self.last_check_failed = False
        self.passed = self.app.progress.is_done(self.exercise.name)
        if error is not None:
            self._show_load_error(error)
        else:
            self._load_editor(text)
        self._show_hints()
        self._close_solution()
        self.query_one(TabbedContent).active = "tab-task"
        if backup is not None:
            self._show_backup(backup)
        kept = " " + _("Your code was kept in {backup}.").format(backup=backup) if backup else ""
        if restored:
            self._show_results("idle", N_("Your code from before the reset is back."))
            self.notify(_("{file} is back as it was before the reset.").format(file=self.exercise.file) + kept,
                        title=_("Reset undone"), timeout=12, markup=False)
        else:
            self._show_results("idle", N_("The starter code is back."))
            self.notify(_("{file} is back to its starter code.").format(file=self.exercise.file) + kept,
                        title=_("Reset"), timeout=12, markup=False)

    # -- undoing a reset -------------------------------------------------------------------
    @work(thread=True, exclusive=True, group="backup", exit_on_error=False, description=N_("looking for backups"))
    def _find_backup(self) -> None:
        backup = self.app.services.latest_backup(self.exercise)
        if backup is not None:
            self.app.call_from_thread(self._show_backup, backup)

    def _show_backup(self, backup: Path) -> None:
        """The newest backup stays named on screen (not only in a toast that goes away)."""
        self.backup = backup
        line = self.query_one("#exercise-backup", Static)
        line.update(Content(_("↶ Backup of your code before the last reset: {path} · u puts it back").format(
            path=_short_path(backup))))
        line.display = True

    def action_restore(self) -> None:
        if self.backup is None:
            self.notify(_("No reset to undo: this exercise has no backup under .jaxlings/backups/."),
                        title=_("Nothing to restore"))
            return
        backup = self.backup

        def answered(yes: bool | None) -> None:
            if yes and self.keep_unsaved():
                self.resetting = True
                self._restore(backup)

        self.app.push_screen(
            ConfirmScreen(
                _("Put back [b]{backup}[/b] as {file}?\n"
                  "What the file holds now is kept as a backup first, so this can be undone too.").format(
                    backup=escape_markup(_short_path(backup)), file=self.exercise.file),
                yes=_("Restore"),
                no=_("Keep the file as it is"),
            ),
            answered,
        )

    @work(thread=True, exclusive=True, group="file", exit_on_error=False, description=N_("restoring your code"))
    def _restore(self, backup: Path) -> None:
        try:
            kept, progress = self.app.services.restore_backup(self.exercise, backup, self.app.progress)
            text, error = self.app.services.read_learner_file(self.exercise.exercise_path())
            self.app.call_from_thread(self._after_reset, text, error, kept, progress, True)
        finally:
            self.app.call_from_thread(setattr, self, "resetting", False)

    # -- elsewhere ------------------------------------------------------------------------
    def action_next(self) -> None:
        if not self.passed:
            self.notify(_("The next exercise opens after this one passes. Ctrl+P jumps anywhere."), title=_("Not yet"))
            return
        step = self.app.progress.next_step(self.app.catalog, after=self.exercise.name)
        if step is None:
            self.notify(_("Every exercise passes. The training lab is on the map (l)."), title=_("✓ Course complete"))
            return
        kind, item = step
        if kind == "lesson":
            self.app.open_lesson(item.name)
        else:
            self.app.open_exercise(item.name)

    def action_lesson(self) -> None:
        self.app.open_lesson(self.exercise.lesson)

    def action_edit(self) -> None:
        if self.load_error is not None:
            self.notify(self.load_error, title=_("Not open for editing"), severity="warning", timeout=10, markup=False)
            return
        self.editor.focus()

    def action_toggle_auto(self) -> None:
        self.auto_check = not self.auto_check
        self._update_status()

    def action_leave(self) -> None:
        if self.editor_focused():
            self._leave_editor()
            return
        if self.query_one("#solution").display:
            self._close_solution()
            return
        self.confirm_leave(self.app.back_to_map, _("going back to the map"))

    def action_external_editor(self) -> None:
        command, problem = self.app.services.resolve_editor()
        if command is None:
            self.notify(problem or _("No editor found."), title=_("Your editor cannot start"), severity="warning",
                        timeout=12, markup=False)
            return
        if problem:
            self.notify(problem, title=_("About your editor"), severity="warning", timeout=12, markup=False)
        self.confirm_leave(lambda: self._run_external(command), _("opening your editor"))

    def _run_external(self, command: list[str]) -> None:
        from textual.app import SuspendNotSupported

        try:
            with self.app.suspend():
                completed = subprocess.run([*command, str(self.exercise.exercise_path())], check=False)
        except SuspendNotSupported:
            self.notify(_("This terminal cannot hand over to another program."), severity="warning")
            return
        except OSError as error:
            self.notify(_("Could not start {program}: {error}").format(program=command[0], error=error),
                        severity="error", timeout=12, markup=False)
            return
        except KeyboardInterrupt:
            # Ctrl+C in a terminal editor that lets it through reaches this process too.
            self.notify(_("{program} was interrupted.").format(program=command[0]), severity="warning", markup=False)
            self._reload_after_external()
            return
        if completed.returncode != 0:
            self.notify(_("{program} exited with status {status}.").format(program=command[0], status=completed.returncode),
                        severity="warning", markup=False)
        # The watcher sees the change too; reading now just makes the result immediate.
        self._reload_after_external()

    @work(thread=True, exclusive=True, group="file", exit_on_error=False, description=N_("reading your file"))
    def _reload_after_external(self) -> None:
        text, error = self.app.services.read_learner_file(self.exercise.exercise_path())
        if error is None:
            self.post_message(self.FileChanged(text))
        else:
            self.app.call_from_thread(self._show_load_error, error)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("check", "save_check") and self.checking:
            return False
        if action in LETTER_ACTIONS and self.editor_focused():
            return False
        if action == "goto_line" and (self.load_error is not None or self.disk_text is None):
            return None
        return True

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def on_descendant_blur(self) -> None:
        self.refresh_bindings()

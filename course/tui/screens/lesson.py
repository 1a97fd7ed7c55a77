"""A lesson: its Markdown, PyTorch and JAX side by side, and a table of contents."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Header, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from course.i18n import N_, _, content
from course.tui.screens.base import CourseScreen
from course.tui.widgets.code import CodePair, CodePanel
from course.tui.widgets.footer import CourseFooter

HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def split_sections(text: str) -> list[tuple[tuple[int, str] | None, str]]:
    """Cut prose before each heading so the contents can scroll to the heading itself."""
    sections: list[tuple[tuple[int, str] | None, list[str]]] = [(None, [])]
    for line in text.splitlines():
        m = HEADING.match(line)
        if m:
            sections.append(((len(m.group(1)), m.group(2)), [line]))
        else:
            sections[-1][1].append(line)
    return [(h, "\n".join(lines)) for h, lines in sections if "\n".join(lines).strip()]


def _block_title(block: Any) -> str:
    if block.language in ("text", "console", "output"):
        return _("Output")
    name = "PyTorch" if block.framework == "torch" else "JAX"
    if block.raises:
        return _("{framework} · raises {error}").format(framework=name, error=block.raises)
    return name


class LessonScreen(CourseScreen):
    BINDINGS = [
        Binding("escape", "app.back_to_map", N_("Map"), id="lesson.back", tooltip=N_("Back to the course map")),
        Binding("e", "exercise", N_("Exercise"), id="lesson.exercise", tooltip=N_("Open this lesson's next exercise")),
        Binding("t", "toggle_contents", N_("Contents"), id="lesson.contents",
                tooltip=N_("Show or hide the table of contents")),
    ]

    @dataclass
    class Loaded(Message):
        lesson_text: Any
        path: Any = None

    def __init__(self, lesson: Any) -> None:
        super().__init__()
        self.lesson = lesson
        self.sections: list[tuple[int, str, str]] = []  # (level, heading, widget id)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="lesson-main"):
            yield OptionList(id="lesson-toc")
            yield VerticalScroll(id="lesson-body")
        yield CourseFooter()

    def on_mount(self) -> None:
        self.sub_title = content(self.lesson.title)
        self.query_one("#lesson-body").loading = True
        self._load()
        self._mark_read()

    @work(thread=True, exclusive=True, group="read", exit_on_error=False, description=N_("remembering this lesson"))
    def _mark_read(self) -> None:
        # What comes next after an exercise (n) is this lesson only until it has been opened.
        if self.app.progress is not None:
            self.app.services.mark_lesson_read(self.lesson, self.app.progress)

    def language_changed(self) -> None:
        """Read the lesson again, in the edition of the language now in use."""
        self.call_later(self._reload)

    async def _reload(self) -> None:
        self.sub_title = content(self.lesson.title)
        body = self.query_one("#lesson-body", VerticalScroll)
        await body.remove_children()
        self.query_one("#lesson-toc", OptionList).clear_options()
        self.sections = []
        body.loading = True
        self._load()

    @work(thread=True, exclusive=True, exit_on_error=False, description=N_("reading the lesson"))
    def _load(self) -> None:
        path = self.lesson.lesson_path()
        self.post_message(self.Loaded(self.app.services.load_lesson(path), path))

    async def on_lesson_screen_loaded(self, event: Loaded) -> None:
        if event.path is not None and event.path != self.lesson.lesson_path():
            return  # read before the language changed; the other edition is on its way
        body = self.query_one("#lesson-body", VerticalScroll)
        widgets = self._widgets_for(event.lesson_text)
        await body.mount_all(widgets)
        body.loading = False
        toc = self.query_one("#lesson-toc", OptionList)
        toc.add_options(
            Option(("  " * max(level - 2, 0)) + heading.replace("`", "").replace("**", ""), id=wid) for level, heading, wid in self.sections
        )
        body.focus()
        # The text is on screen; the colours follow.
        self._highlight(list(body.query(CodePanel)))

    @work(thread=True, exclusive=True, group="highlight", exit_on_error=False, description=N_("colouring the code"))
    def _highlight(self, panels: list[CodePanel]) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        for panel in panels:
            if worker.is_cancelled:
                return
            text = panel.highlighted()
            self.app.call_from_thread(panel.show_highlighted, text)

    def _widgets_for(self, lesson_text: Any) -> list[Widget]:
        from course.lessons import CodeBlock, Prose, SideBySide

        widgets: list[Widget] = []
        for segment in lesson_text.segments:
            if isinstance(segment, Prose):
                for heading, text in split_sections(segment.text):
                    wid = None
                    if heading is not None:
                        wid = f"section-{len(self.sections)}"
                        self.sections.append((heading[0], heading[1], wid))
                    widgets.append(Markdown(text, id=wid, classes="prose"))
            elif isinstance(segment, SideBySide):
                widgets.append(CodePair(segment.torch.code, segment.jax.code, classes="pair"))
            elif isinstance(segment, CodeBlock):
                classes = "code single"
                if segment.raises:
                    classes += " raises"
                widgets.append(
                    CodePanel(segment.code, title=_block_title(segment), language=segment.language, classes=classes)
                )
        if not widgets:
            widgets.append(Static(_("This lesson has no text yet."), classes="prose"))
        return widgets

    @on(OptionList.OptionSelected, "#lesson-toc")
    def _jump(self, event: OptionList.OptionSelected) -> None:
        target = self.query_one(f"#{event.option.id}")
        self.query_one("#lesson-body").scroll_to_widget(target, top=True, animate=False)

    def action_toggle_contents(self) -> None:
        toc = self.query_one("#lesson-toc")
        # The narrow layout hides the contents by default; the class flips whichever is current.
        toc.toggle_class("-toggled")
        if toc.display and toc.region.width:
            toc.focus()
        else:
            self.query_one("#lesson-body").focus()

    def action_exercise(self) -> None:
        exercises = list(self.lesson.exercises)
        if not exercises:
            self.notify(_("This lesson has no exercise."))
            return
        progress = self.app.progress
        pending = [e for e in exercises if not progress.is_done(e.name)]
        self.app.open_exercise((pending or exercises)[0].name)

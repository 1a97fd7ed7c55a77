"""Every key of every screen, generated from the bindings so it cannot drift."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown, Static

from course.i18n import N_, _

INTRO = N_("""\
Work through the course in order: read a lesson, then edit its exercise until
every check passes. Your progress is saved as you go. Press **Ctrl+P** anywhere
to jump to any lesson or exercise.

An exercise opens with the focus outside the editor, where letter keys are
actions; **e** or **Enter** goes into the editor and **Esc** comes back out
without typing. Your file is written only by **Ctrl+S**, or by answering
"Save" when you leave with unsaved edits.
""")


def _keys_table(title: str, bindings: list[Binding]) -> str:
    rows = [f"### {title}", "", "| {key} | {does} |".format(key=_("Key"), does=_("Does")), "|---|---|"]
    for b in bindings:
        keys = ", ".join(_key_name(k) for k in b.key.split(","))
        # Descriptions and tooltips are marked with N_ where they are bound.
        description = _(b.description) if b.description else ""
        tooltip = _(b.tooltip) if b.tooltip else ""
        what = tooltip or description or b.action
        if description and tooltip:
            what = f"**{description}**: {tooltip}"
        rows.append(f"| {keys} | {what} |")
    return "\n".join(rows)


def _key_name(key: str) -> str:
    names = {"question_mark": "?", "escape": "Esc", "enter": "Enter", "space": "Space"}
    if key in names:
        return names[key]
    if key.startswith("ctrl+"):
        return "Ctrl+" + key[5:].upper()
    return key.upper() if key.startswith("f") and key[1:].isdigit() else key


def help_markdown() -> str:
    from course.tui.app import JaxlingsApp
    from course.tui.screens.exercise import ExerciseScreen
    from course.tui.screens.lab import LabScreen
    from course.tui.screens.lesson import LessonScreen
    from course.tui.screens.map import MapScreen

    sections = [_(INTRO)]
    for title, cls in (
        (N_("Everywhere"), JaxlingsApp),
        (N_("Course map"), MapScreen),
        (N_("Lesson"), LessonScreen),
        (N_("Exercise"), ExerciseScreen),
        (N_("Training lab"), LabScreen),
    ):
        sections.append(_keys_table(_(title), [b for b in cls.BINDINGS if isinstance(b, Binding)]))
    return "\n\n".join(sections)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,f1,question_mark", "dismiss", N_("Close"), id="help.close")]

    def __init__(self, behind: Screen | None = None) -> None:
        super().__init__()
        self.behind = behind

    def compose(self) -> ComposeResult:
        with Vertical(id="help-box"):
            yield Static(_("Keys — Esc closes"), id="help-title")
            with VerticalScroll(id="help-body"):
                yield Markdown(help_markdown())

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    def language_changed(self) -> None:
        self.call_later(self._redraw)

    async def _redraw(self) -> None:
        await self.recompose()
        self.query_one("#help-body").focus()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(None)

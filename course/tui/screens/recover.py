"""Unsaved edits from an earlier run, offered beside the file on disk.

The app ended with edits not saved (the terminal closed, a crash): their copy
differs from the file. The learner sees the difference and chooses. No printable
key answers (see DeliberateScreen), the focus starts on "Decide later", and Esc
answers that too: both stay exactly as they are.
"""

from __future__ import annotations

import difflib

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Static

from course.i18n import N_, _
from course.tui.screens.deliberate import DeliberateScreen


def recovery_diff(disk: str, recovered: str) -> Content:
    """The file on disk (-) against the recovered edits (+), with two lines of context."""
    lines = list(difflib.unified_diff(disk.splitlines(), recovered.splitlines(), lineterm="", n=2))[2:]
    styles = {"-": "$error", "+": "$success", "@": "$text-muted"}
    body = []
    for line in lines:
        text = Content(line)  # the learner's text, never markup
        style = styles.get(line[:1])
        body.append(text.stylize(style) if style else text)
    return Content("\n").join(body)


class RecoverScreen(DeliberateScreen[str | None]):
    """Dismisses with RECOVERED (load the copy into the editor, unsaved), DISK (keep the
    file; the copy is set aside as a dated one), or None (decide later: nothing changes)."""

    RECOVERED = "recovered"
    DISK = "disk"

    BINDINGS = [
        Binding("escape", "answer(None)", N_("Decide later"), id="recover.later"),
    ]

    def __init__(self, file: str, disk: str, recovered: str, where: str) -> None:
        super().__init__()
        self.file = file
        self.disk = disk
        self.recovered = recovered
        self.where = where

    def compose(self) -> ComposeResult:
        with Vertical(id="recover-box"):
            yield Static(id="recover-question")
            yield Static(Content.from_markup("[dim]" + _("- the file on disk   + your unsaved edits") + "[/dim]"),
                         id="recover-legend")
            with VerticalScroll(id="recover-diff-pane"):
                yield Static(recovery_diff(self.disk, self.recovered), id="recover-diff")
            with Horizontal(id="recover-buttons"):
                yield Button(_("Decide later"), variant="primary", id="recover-later")
                yield Button(_("Keep the file"), id="recover-disk")
                yield Button(_("Use my edits"), variant="warning", id="recover-recovered")
            yield Static(_("Tab or arrows choose, Enter answers, Esc decides later (nothing changes). "
                           "\"Use my edits\" puts them in the editor; Ctrl+S saves them."), id="recover-keys")

    def on_mount(self) -> None:
        self.query_one("#recover-question", Static).update(Content.from_markup(
            _("[b]$file[/b] had unsaved edits when jaxlings last ended. They were kept in $where."),
            file=self.file, where=self.where))
        self.query_one("#recover-later").focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss({"recover-recovered": self.RECOVERED, "recover-disk": self.DISK}.get(event.button.id or ""))

    def action_answer(self, value: str | None) -> None:
        self.dismiss(value)

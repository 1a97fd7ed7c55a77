"""A question about something that cannot be taken back (a reset, a restore).

Answered with the mouse, or with Tab/arrows and then Enter: never by one
printable key (see DeliberateScreen). The focus starts on the answer that keeps
everything as it is.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from course.i18n import N_, _
from course.tui.screens.deliberate import DeliberateScreen


class ConfirmScreen(DeliberateScreen[bool]):
    BINDINGS = [
        Binding("escape", "answer(False)", N_("No"), id="confirm.no"),
    ]

    def __init__(self, question: str, *, yes: str | None = None, no: str | None = None) -> None:
        super().__init__()
        self.question = question
        self.yes_label = yes or _("Yes")
        self.no_label = no or _("No")

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(self.question, id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(self.no_label, variant="primary", id="confirm-no")
                yield Button(self.yes_label, variant="error", id="confirm-yes")
            yield Static(_("Tab or arrows choose, Enter answers, Esc keeps everything as it is."),
                         id="confirm-keys")

    def on_mount(self) -> None:
        # The safe answer has the focus, so an absent-minded Enter loses nothing.
        self.query_one("#confirm-no").focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

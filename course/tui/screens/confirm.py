"""A yes/no question that blocks the screen behind it until answered."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from course.i18n import N_, _


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", N_("Yes"), id="confirm.yes"),
        Binding("n,escape", "answer(False)", N_("No"), id="confirm.no"),
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
                yield Button(f"{self.yes_label} (y)", variant="error", id="confirm-yes")
                yield Button(f"{self.no_label} (n)", variant="primary", id="confirm-no")

    def on_mount(self) -> None:
        # The safe answer has the focus, so an absent-minded Enter loses nothing.
        self.query_one("#confirm-no").focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "confirm-yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

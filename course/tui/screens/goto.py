"""Go to a line of the exercise file."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from course.i18n import N_, _


class GotoLineScreen(ModalScreen[int | None]):
    BINDINGS = [Binding("escape", "cancel", N_("Cancel"), id="goto.cancel")]

    def __init__(self, lines: int, suggested: int | None = None) -> None:
        super().__init__()
        self.lines = lines
        self.suggested = suggested

    def compose(self) -> ComposeResult:
        with Vertical(id="goto-box"):
            yield Static(_("Go to line (1–{lines}), Enter to jump, Esc to cancel").format(lines=self.lines),
                         id="goto-title")
            yield Input(
                value=str(self.suggested) if self.suggested else "",
                placeholder=_("line number"),
                restrict=r"[0-9]*",  # digits only: not the `_`, `-` or `e` an integer literal allows
                id="goto-line",
            )
            yield Static("", id="goto-error")

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.focus()
        # The suggestion is selected, so a number typed replaces it instead of adding to it.
        field.select_all()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        try:
            line = int(event.value)
        except ValueError:
            line = 0
        if not 1 <= line <= self.lines:
            self.query_one("#goto-error", Static).update(_("The file has lines 1 to {lines}.").format(lines=self.lines))
            return
        self.dismiss(line)

    def action_cancel(self) -> None:
        self.dismiss(None)

"""Leaving an exercise with unsaved edits: save them, drop them, or stay."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from course.i18n import N_, _

SAVE = "save"
DISCARD = "discard"


class UnsavedScreen(ModalScreen[str | None]):
    """Dismisses with SAVE, DISCARD, or None to stay where you are."""

    BINDINGS = [
        Binding("s", "answer('save')", N_("Save"), id="unsaved.save"),
        Binding("d", "answer('discard')", N_("Discard"), id="unsaved.discard"),
        Binding("c,escape", "answer(None)", N_("Cancel"), id="unsaved.cancel"),
    ]

    def __init__(self, file: str, doing: str) -> None:
        super().__init__()
        self.file = file
        self.doing = doing

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(_("Save (s)"), variant="primary", id="unsaved-save")
                yield Button(_("Discard (d)"), variant="error", id="unsaved-discard")
                yield Button(_("Cancel (c)"), id="unsaved-cancel")

    def on_mount(self) -> None:
        from textual.content import Content

        self.query_one("#confirm-question", Static).update(
            Content.from_markup(
                _("[b]$file[/b] has unsaved edits.\nSave them before $doing?"), file=self.file, doing=self.doing
            )
        )
        # Staying is the answer that loses nothing, so a stray Enter picks it.
        self.query_one("#unsaved-cancel").focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        answer = {"unsaved-save": SAVE, "unsaved-discard": DISCARD}.get(event.button.id or "")
        self.dismiss(answer)

    def action_answer(self, value: str | None) -> None:
        self.dismiss(value)

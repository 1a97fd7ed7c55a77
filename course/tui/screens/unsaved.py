"""Leaving an exercise with unsaved edits: save them, drop them, or stay.

No printable key answers (see DeliberateScreen): Ctrl+S saves, as it does in
the editor; Discard needs Tab/arrows and Enter, or the mouse; Esc stays.
Dropped edits are still kept in a recovery file by the exercise screen.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from course.i18n import N_, _
from course.tui.screens.deliberate import DeliberateScreen

SAVE = "save"
DISCARD = "discard"


class UnsavedScreen(DeliberateScreen[str | None]):
    """Dismisses with SAVE, DISCARD, or None to stay where you are."""

    BINDINGS = [
        Binding("ctrl+s", "answer('save')", N_("Save"), id="unsaved.save"),
        Binding("escape", "answer(None)", N_("Cancel"), id="unsaved.cancel"),
    ]

    def __init__(self, file: str, doing: str) -> None:
        super().__init__()
        self.file = file
        self.doing = doing

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box"):
            yield Static(id="confirm-question")
            with Horizontal(id="confirm-buttons"):
                yield Button(_("Cancel"), variant="primary", id="unsaved-cancel")
                yield Button(_("Save (Ctrl+S)"), id="unsaved-save")
                yield Button(_("Discard"), variant="error", id="unsaved-discard")
            yield Static(_("Tab or arrows choose, Enter answers, Esc stays. "
                           "Discarded edits are kept under .jaxlings/recovery/."), id="confirm-keys")

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

"""Dialogs that a stray key cannot answer.

A learner who thinks the editor has the focus types on: `retry`, `def f():`,
a Tab to indent, Enter. None of that may confirm something that loses work. So
in these dialogs no printable key answers anything, the focus starts on the
answer that changes nothing, and Tab, arrows and Enter count only once the
keyboard has been quiet for a moment since the dialog opened or since the last
printable key. Esc (stay) always works, and so does the mouse.
"""

from __future__ import annotations

import time
from typing import TypeVar

from textual import events
from textual.binding import Binding
from textual.screen import ModalScreen

from course.i18n import N_

T = TypeVar("T")

NAVIGATION = {"tab", "shift+tab", "left", "right", "up", "down", "enter", "space", "home", "end"}


class DeliberateScreen(ModalScreen[T]):
    # How long the keyboard must be quiet before Tab, arrows and Enter act: longer
    # than the gap between two keys of someone typing, shorter than a decision.
    QUIET_S = 0.6

    BINDINGS = [
        Binding("left,up", "app.focus_previous", N_("Previous"), id="dialog.previous", show=False),
        Binding("right,down", "app.focus_next", N_("Next"), id="dialog.next", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._quiet_from = time.monotonic() + self.QUIET_S

    def on_key(self, event: events.Key) -> None:
        now = time.monotonic()
        if event.is_printable:
            # Typing meant for the editor: it answers nothing, and keeps Enter and Tab asleep.
            self._quiet_from = now + self.QUIET_S
            event.stop()
            event.prevent_default()
        elif event.key in NAVIGATION and now < self._quiet_from:
            event.stop()
            event.prevent_default()

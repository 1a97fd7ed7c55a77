"""Shown over everything while the terminal is too small for the app's layout."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Static

from course.i18n import _

MIN_WIDTH = 80
MIN_HEIGHT = 20


def too_small(width: int, height: int) -> bool:
    return width < MIN_WIDTH or height < MIN_HEIGHT


class TooSmallScreen(ModalScreen[None]):
    """Takes every key but quit, so nothing is typed or pressed blind; goes away
    by itself once the terminal is large enough."""

    BINDINGS = [Binding("escape", "app.bell", show=False)]

    def compose(self) -> ComposeResult:
        yield Static(id="too-small-text")

    def on_mount(self) -> None:
        size = self.app.size
        self.update_size(size.width, size.height)

    def update_size(self, width: int, height: int) -> None:
        self.query_one("#too-small-text", Static).update(
            _("The terminal is {width}×{height}; jaxlings needs at least "
              "{min_width}×{min_height}.\n\nMake the window larger (or the font smaller). "
              "Nothing is lost meanwhile; Ctrl+Q quits.").format(
                width=width, height=height, min_width=MIN_WIDTH, min_height=MIN_HEIGHT)
        )

"""The language setting: English or Japanese, switched at once and remembered."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from course import i18n
from course.i18n import N_, _


class LanguageScreen(ModalScreen[str | None]):
    """Dismisses with the chosen language's code, or None to keep the current one."""

    BINDINGS = [Binding("escape", "cancel", N_("Cancel"), id="language.cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="language-box"):
            yield Static(_("Language — Enter chooses, Esc closes"), id="language-title")
            # Each language is named in itself, so it can be found whichever is in use.
            yield OptionList(*(Option(f"{name}  ✓" if code == i18n.language() else name, id=code)
                               for code, name in i18n.LANGUAGES.items()), id="language-list")
            yield Static(_("Saved in .jaxlings/settings.json; `jaxlings --lang` and "
                           "JAXLINGS_LANG take precedence at start."), id="language-note")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = list(i18n.LANGUAGES).index(i18n.language())
        options.focus()

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        self.dismiss(None)

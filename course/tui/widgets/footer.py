"""Textual's footer, speaking the course's language.

Binding descriptions and tooltips are class attributes, written once in English
and marked with `N_()`; the footer reads them every time it composes its keys,
so translating them here, at that moment, follows a language switched while
the app runs (the app then asks each screen to refresh its bindings).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from course.i18n import N_, _

# Textual's own command-palette binding, shown at the right of the footer.
N_("palette")
N_("Open the command palette")


class CourseFooter(Footer):
    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                if widget.description:
                    widget.description = _(widget.description)
                tooltip = widget.tooltip
                if isinstance(tooltip, str) and tooltip:
                    widget.tooltip = _(tooltip)
            yield widget

"""Textual measures the narrowest a text can be by its longest run of non-space
characters; Japanese has no spaces, so a whole sentence counts as one word. A
table then squeezes its other columns to make room for it, and cuts their words
(`Ctrl+R,` became `Ctrl+…` in the help's key table).

`install()` measures with the units `course.i18n.linebreak` wraps by (a CJK character
with the punctuation that must stay beside it, or a run of other non-space
characters), so a text's minimal width is the widest piece a line break can
leave whole. Text without CJK characters measures as before.
"""

from __future__ import annotations

from rich.cells import cell_len

from course.i18n.linebreak import TEXTUAL_CHUNK


def minimal_width(text: str) -> int:
    """The widest unit of `text` that a line break cannot split, in cells."""
    return max((cell_len(unit.strip()) for line in text.splitlines() for unit in TEXTUAL_CHUNK.findall(line)),
               default=0)


def install() -> None:
    from textual.content import Content

    def get_minimal_width(self: Content, rules) -> int:
        if not self.plain.strip():
            return 0
        if self._minimal_width_cache is None:
            self._minimal_width_cache = minimal_width(self.plain)
        return self._minimal_width_cache

    Content.get_minimal_width = get_minimal_width

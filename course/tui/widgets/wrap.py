"""Text that wraps under its own indentation, with a mark on each continued row.

Textual wraps a long line back to the first column. In code that reads as a new line of
code (the end of a trailing `# → value` comment becomes a line of its own), and in the
results an indented traceback line loses the indentation that says whose it is. Here a
row that continues a line starts at that line's indentation, after a dim `↪`, and a code
line too long for the panel breaks before its trailing comment first."""

from __future__ import annotations

import io
import tokenize

from rich.cells import cell_len
from textual.content import Content
from textual.css.styles import RulesMap
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual

MARK = "↪ "


def comment_start(line: str) -> int | None:
    """Where the trailing comment of a line of Python starts (None: no comment, or not Python)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line.lstrip() + "\n").readline):
            if token.type == tokenize.COMMENT:
                return token.start[1] + len(line) - len(line.lstrip())
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return None


def _fit(text: str, start: int, cells: int) -> int:
    """The index in `text` after the most characters from `start` that fit in `cells`."""
    used = 0
    end = start
    while end < len(text):
        width = cell_len(text[end])
        if used + width > cells:
            break
        used += width
        end += 1
    return end


def _break(text: str, start: int, cells: int, comment: int | None) -> int:
    """Where a row that starts at `start` ends: before a comment, at a space, or where it is full."""
    end = _fit(text, start, cells)
    if end >= len(text):
        return end
    if comment is not None and start < comment <= end and text[start:comment].strip():
        return comment
    space = text.rfind(" ", start + 1, end + 1)
    if space > start and text[start:space].strip():
        return space
    return max(end, start + 1)


def hang(content: Content, width: int, *, code: bool = False) -> Content:
    """`content` with every line longer than `width` cells broken into rows that keep its indentation."""
    if width < 8:
        return content
    rows: list[Content] = []
    for line in content.split("\n", allow_blank=True):
        text = line.plain
        if cell_len(text) <= width:
            rows.append(line)
            continue
        indent = min(len(text) - len(text.lstrip(" ")), width // 2)
        lead = Content(" " * indent) + Content.styled(MARK, "dim")
        comment = comment_start(text) if code else None
        start = 0
        first = True
        while start < len(text):
            room = width if first else width - lead.cell_length
            end = _break(text, start, room, comment)
            piece = line[start:end]
            rows.append(piece.rstrip() if first else lead + piece.rstrip())
            start = end
            while start < len(text) and text[start] == " ":
                start += 1
            first = False
    return Content("\n").join(rows)


class HangingText(Visual):
    """A Content that wraps with `hang` at whatever width it is drawn."""

    def __init__(self, content: Content, *, code: bool = False) -> None:
        self.content = content
        self.code = code
        self._cache: tuple[int, Content] | None = None

    @property
    def plain(self) -> str:
        return self.content.plain

    def _at(self, width: int) -> Content:
        if self._cache is None or self._cache[0] != width:
            self._cache = (width, hang(self.content, width, code=self.code))
        return self._cache[1]

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        return self._at(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.content.get_optimal_width(rules, container_width)

    def get_minimal_width(self, rules: RulesMap) -> int:
        return self.content.get_minimal_width(rules)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self._at(width).get_height(rules, width)

    def __str__(self) -> str:
        return self.content.plain


__all__ = ["HangingText", "hang"]

"""The built-in editor: a Python code editor that keeps indentation on Enter."""

from __future__ import annotations

import io
import tokenize

from textual import events
from textual.widgets import TextArea

INDENT = "    "


def indent_after(line_before_cursor: str) -> str:
    """The indentation a new line gets when Enter is pressed after this text:
    the same as the line's, one level more after a trailing colon."""
    stripped = line_before_cursor.lstrip(" \t")
    indent = line_before_cursor[: len(line_before_cursor) - len(stripped)]
    if _last_token(stripped) == ":":
        indent += INDENT
    return indent


def _last_token(code: str) -> str:
    """The line's last token that is not a comment ('#' inside a string is no comment)."""
    last = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in (tokenize.OP, tokenize.NAME, tokenize.NUMBER, tokenize.STRING):
                last = token.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass  # an unfinished line (an open bracket): what was read so far decides
    return last


class CodeEditor(TextArea):
    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter" and not self.read_only:
            event.stop()
            event.prevent_default()
            start, end = self.selection
            row, column = min(start, end)
            before = self.document[row][:column]
            self._replace_via_keyboard("\n" + indent_after(before), start, end)
            return
        await super()._on_key(event)

    def go_to_line(self, line: int) -> None:
        """Put the cursor on `line` (1-based), at its first character."""
        row = max(0, min(line - 1, self.document.line_count - 1))
        text = self.document[row]
        self.cursor_location = (row, len(text) - len(text.lstrip()))
        self.scroll_cursor_visible(center=True, animate=False)

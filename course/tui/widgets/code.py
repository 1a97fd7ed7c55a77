"""Code panels, and the PyTorch | JAX pair a lesson is built around.

A panel shows its code as plain text at once and takes its colours later
(`highlighted()` runs in a worker): on a busy machine, Pygments on the event
loop kept a whole lesson behind an empty box for seconds."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Static

from course.tui.widgets.wrap import HangingText


class CodePanel(Static):
    """One read-only code block."""

    def __init__(self, code: str, *, title: str = "", language: str = "python", **kwargs) -> None:
        lang = language if language in ("python", "console", "text", "bash", "toml") else "python"
        self.code = code.rstrip("\n")
        self.language = None if lang in ("console", "text") else lang
        self.is_highlighted = False
        # A long line wraps under its own indentation, a trailing comment on a row of its own.
        super().__init__(HangingText(Content(self.code), code=self.language == "python"), **kwargs)
        if title:
            self.border_title = title

    def highlighted(self) -> Content:
        """The code in the app's theme colours (slow: call it from a worker)."""
        return highlight(self.code, language=self.language)

    def show_highlighted(self, text: Content) -> None:
        if not self.is_mounted:
            return  # the lesson was read again (another language) while this was being coloured
        self.update(HangingText(text, code=self.language == "python"))
        self.is_highlighted = True


class CodePair(Horizontal):
    """PyTorch on the left, JAX on the right; stacked on a narrow terminal (see app.tcss)."""

    def __init__(self, torch_code: str, jax_code: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self._torch = torch_code
        self._jax = jax_code

    def compose(self) -> ComposeResult:
        yield CodePanel(self._torch, title="PyTorch", classes="code torch")
        yield CodePanel(self._jax, title="JAX", classes="code jax")

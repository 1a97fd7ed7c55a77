"""Highlighted code panels, and the PyTorch | JAX pair a lesson is built around."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.highlight import highlight
from textual.widgets import Static


class CodePanel(Static):
    """One read-only code block, highlighted with the app's theme colours."""

    def __init__(self, code: str, *, title: str = "", language: str = "python", **kwargs) -> None:
        lang = language if language in ("python", "console", "text", "bash", "toml") else "python"
        content = highlight(code.rstrip("\n"), language=None if lang in ("console", "text") else lang)
        super().__init__(content, **kwargs)
        if title:
            self.border_title = title


class CodePair(Horizontal):
    """PyTorch on the left, JAX on the right; stacked on a narrow terminal (see app.tcss)."""

    def __init__(self, torch_code: str, jax_code: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self._torch = torch_code
        self._jax = jax_code

    def compose(self) -> ComposeResult:
        yield CodePanel(self._torch, title="PyTorch", classes="code torch")
        yield CodePanel(self._jax, title="JAX", classes="code jax")

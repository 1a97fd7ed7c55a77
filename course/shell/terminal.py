"""What the shell commands may do to the learner's terminal, and the tricks they use.

Cursor tricks (a live line, clearing the screen) only on a real terminal that
is not TERM=dumb; colour follows rich, which honours NO_COLOR. Pipes and files
get plain lines, so JSON and logs stay clean.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

from rich.console import Console
from rich.text import Text

from course.i18n import _

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class ShellConsole(Console):
    """rich's Console, but a closed pipe raises BrokenPipeError for the entry point to handle
    (rich's own handling exits with status 1, which our scripts read as a failed check)."""

    def on_broken_pipe(self) -> None:
        import errno

        raise BrokenPipeError(errno.EPIPE, "the reader closed the pipe")


def safe_text(text: str) -> str:
    """Learner-controlled text made harmless for a terminal: control and format characters
    (escape sequences, bidi overrides) and lone surrogates are shown as escapes, never sent."""
    out = []
    for ch in text:
        if ch in "\n\t" or not _unsafe(ch):
            out.append(ch)
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


def _unsafe(ch: str) -> bool:
    import unicodedata

    return unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") and ch not in "\n\t"


def can_redraw(console: Console) -> bool:
    """True where moving the cursor and clearing the screen is welcome."""
    return console.is_terminal and not console.is_dumb_terminal


def wrap_cells(text: str, width: int) -> list[str]:
    """`text` (one paragraph) in lines of at most `width` cells, broken the way Rich breaks
    them once `course.i18n.linebreak` is installed: at spaces, and between Japanese characters."""
    import io

    from course.i18n import linebreak

    linebreak.install()
    console = Console(width=max(width, 4), file=io.StringIO(), color_system=None)
    return [line.plain.rstrip() for line in Text(text).wrap(console, max(width, 4))]


class _ElapsedLine:
    """Re-rendered by rich's Live a few times a second: the time moves on its own."""

    def __init__(self, label: str, budget: float | None, clock=time.monotonic) -> None:  # noqa: ANN001
        self.label = label
        self.budget = budget
        self.clock = clock
        self.start = clock()

    def text(self) -> str:
        seconds = int(self.clock() - self.start)
        # The limit counts only the time the learner's code runs, not starting Python
        # and JAX, so it is said as a limit, not as a countdown.
        limit = " " + _("(your code may run {budget} s)").format(budget=f"{self.budget:g}") if self.budget else ""
        return _("checking {label}… {seconds} s").format(label=self.label, seconds=seconds) + limit

    def __rich_console__(self, console, options):  # noqa: ANN001 - rich protocol
        frame = SPINNER[int((self.clock() - self.start) * 10) % len(SPINNER)]
        yield Text(f"{frame} {self.text()}", style="dim")


@contextlib.contextmanager
def elapsed_line(label: str, budget: float | None, console: Console | None = None) -> Iterator[None]:
    """While the body runs, show "checking NAME… 4 s (your code may run 30 s)" on stderr, then erase it.

    Nothing at all when stderr is not a redrawable terminal.
    """
    console = console or ShellConsole(stderr=True, highlight=False)
    if not can_redraw(console):
        yield
        return
    from rich.live import Live

    with Live(_ElapsedLine(label, budget), console=console, transient=True, refresh_per_second=4,
              redirect_stdout=False, redirect_stderr=False):
        yield


@contextlib.contextmanager
def single_keys(fd: int | None = None) -> Iterator[bool]:
    """Read keys one at a time, unechoed (cbreak mode), while the body runs; yields whether it could.

    Ctrl-C still interrupts (cbreak keeps ISIG). The terminal's settings come
    back however the body ends: a return, an exception, Ctrl-C.
    """
    if fd is None:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):
            yield False
            return
    try:
        import termios
        import tty
    except ImportError:  # not a POSIX terminal
        yield False
        return
    if not os.isatty(fd):
        yield False
        return
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        yield False
        return
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        yield True
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def budget_of(exercise: Any) -> float | None:
    """The exercise's time limit as the runner applies it (None if it cannot be read)."""
    try:
        from course.engine.runner import time_budget

        return time_budget(exercise)
    except Exception:  # noqa: BLE001 - a broken check module is reported by the check itself
        return None

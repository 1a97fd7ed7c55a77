"""What the shell commands may do to the learner's terminal, and the tricks they use.

Cursor tricks (a live line, clearing the screen) only on a real terminal that
is not TERM=dumb; colour follows rich, which honours NO_COLOR. Pipes and files
get plain lines, so JSON and logs stay clean.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
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


def lesson_markdown(text: str):  # noqa: ANN201 - a rich Markdown, imported only here
    """`text` as Rich Markdown whose table cells wrap and fold: never cut with "…".

    Rich's own tables cut a cell line that does not fit with an ellipsis, dropping what
    follows; the app's tables wrap. Here a word longer than its column (a long call in
    backticks) is folded onto the next line instead, so every character of the lesson
    is shown."""
    from rich.markdown import Markdown, TableElement

    class FoldingTable(TableElement):
        def __rich_console__(self, console, options):  # noqa: ANN001, ANN204 - rich protocol
            for table in super().__rich_console__(console, options):
                for column in getattr(table, "columns", ()):
                    column.overflow = "fold"
                yield table

    class LessonMarkdown(Markdown):
        elements = {**Markdown.elements, "table_open": FoldingTable}

    return LessonMarkdown(text)


class CellWidthHelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped by terminal cells rather than characters (a Japanese
    character takes two cells) and where `course.i18n.linebreak` allows: between Japanese
    characters, never before 「。」 or a closing bracket, never after an opening one."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        if text.isascii():
            return super()._split_lines(text, width)
        return wrap_cells(self._whitespace_matcher.sub(" ", text).strip(), width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.isascii():
            return super()._fill_text(text, width, indent)
        return "\n".join(indent + line for line in wrap_cells(self._whitespace_matcher.sub(" ", text).strip(),
                                                               width - len(indent)))


class CellWidthRawDescriptionHelpFormatter(CellWidthHelpFormatter):
    """The description and epilog keep their paragraphs, and a paragraph with indented lines
    (examples) stays as written, as with argparse's RawDescriptionHelpFormatter. A paragraph
    whose lines all start at the margin is prose, broken where the English (or the
    translator) broke it: it is joined and wrapped to the terminal as above."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        for paragraph in re.split(r"\n\s*\n", text.strip("\n")):
            lines = paragraph.splitlines()
            if out:
                out.append("")
            if any(line[:1].isspace() for line in lines):
                out += [indent + line for line in lines]
            else:
                out += [indent + line for line in wrap_cells(_joined(lines), width - len(indent))]
        return "\n".join(out)


def _joined(lines: list[str]) -> str:
    """Lines of one paragraph as one: with a space between English words, with none
    beside a Japanese character (Japanese puts no space where a line was broken)."""
    from course.i18n.linebreak import CJK

    cjk = re.compile(f"[{CJK}]")
    text = ""
    for line in (line.strip() for line in lines):
        if text and line:
            text += "" if cjk.match(text[-1]) or cjk.match(line[0]) else " "
        text += line
    return text


def wrapped_prompt(text: str, console: Console) -> str:
    """A prompt for input(), broken into lines of the console's width by the same rules
    (the terminal itself would break a Japanese prompt at any character)."""
    end = " " if text.endswith(" ") else ""
    return "\n".join(wrap_cells(text.strip(), console.width)) + end


class _ElapsedLine:
    """Re-rendered by rich's Live a few times a second: the time moves on its own."""

    def __init__(self, label: str, budget: float | None, clock=time.monotonic) -> None:  # noqa: ANN001
        self.label = label
        self.budget = budget
        self.clock = clock
        self.start = clock()
        self.done = 0  # tests whose outcome has landed

    def text(self) -> str:
        seconds = int(self.clock() - self.start)
        if self.done:
            # The tests that landed are printed above; this line says the rest is still running.
            return _("checking {label}… {seconds} s, {done} done, the rest still running").format(
                label=self.label, seconds=seconds, done=self.done)
        # The limit counts only the time the learner's code runs, not starting Python
        # and JAX, so it is said as a limit, not as a countdown.
        limit = " " + _("(your code may run {budget} s)").format(budget=f"{self.budget:g}") if self.budget else ""
        return _("checking {label}… {seconds} s").format(label=self.label, seconds=seconds) + limit

    def __rich_console__(self, console, options):  # noqa: ANN001 - rich protocol
        frame = SPINNER[int((self.clock() - self.start) * 10) % len(SPINNER)]
        yield Text(f"{frame} {self.text()}", style="dim")


@contextlib.contextmanager
def elapsed_line(label: str, budget: float | None, console: Console | None = None) -> Iterator[Callable]:
    """While the body runs, show "checking NAME… 4 s (your code may run 30 s)" on stderr, then erase it.

    Yields `landed(outcome)`: each test's outcome handed to it is printed above that line as it
    lands (`landed_line`), the first failure with its message, and the line then says how many
    are done and that the rest is still running. Nothing at all when stderr is not a
    redrawable terminal: the verdict printed after it says everything.
    """
    console = console or ShellConsole(stderr=True, highlight=False)
    if not can_redraw(console):
        yield lambda outcome: None
        return
    from rich.live import Live

    line = _ElapsedLine(label, budget)
    failed = [False]

    def landed(outcome: Any) -> None:
        line.done += 1
        first = outcome.outcome in ("failed", "error") and not failed[0]
        failed[0] = failed[0] or first
        live.console.print(landed_line(outcome, with_message=first), highlight=False)

    with Live(line, console=console, transient=True, refresh_per_second=4,
              redirect_stdout=False, redirect_stderr=False) as live:
        yield landed


def landed_line(outcome: Any, *, with_message: bool = False, width: int = 80) -> Text:
    """One test's outcome as it lands: "✓ name", "✗ name", and for the first failure its message
    (the learner's own text inside it made safe, a few lines at most; the verdict has it whole)."""
    from course.engine.results import headline

    mark, style = {"passed": ("✓", "green"), "skipped": ("–", "dim")}.get(outcome.outcome, ("✗", "red"))
    text = Text(f"  {mark} ", style=style)
    text.append(safe_text(outcome.name))
    if outcome.outcome in ("failed", "error"):
        text.append(": " + headline(outcome.cause), style=style)
        if with_message and outcome.message:
            lines = [ln for ln in outcome.message.splitlines() if ln.strip()][:6]
            for ln in lines:
                text.append("\n    " + safe_text(ln[: max(20, width - 4)]), style="dim")
    return text


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
        from course.engine.settings import time_budget

        return time_budget(exercise)
    except Exception:  # noqa: BLE001 - a broken check module is reported by the check itself
        return None


_URL = re.compile(r"https?://\S+")


def box_lines(text: str, width: int) -> tuple[list[str], list[str]]:
    """`text` as the rows of a box `width` cells wide, and the links set apart from it.

    A row that continues a wrapped line starts two cells right of that line's own
    indentation, so an indented traceback line still reads as one. A link that cannot fit
    on a row is not cut (a terminal could not open half of it): the box says where it is,
    and it is returned whole, to be printed under the box."""
    from rich.cells import cell_len

    rows: list[str] = []
    links: list[str] = []
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        indent = min(len(line) - len(stripped), max(width // 2, 0))
        room = max(width - indent, 8)

        def set_apart(match: re.Match) -> str:
            url = match.group(0)
            if cell_len(url) <= room - 2:
                return url
            links.append(url)
            return _("(link {number}, under this box)").format(number=len(links))

        stripped = _URL.sub(set_apart, stripped)
        if cell_len(stripped) <= room:
            rows.append(" " * indent + stripped)
            continue
        wrapped = wrap_cells(stripped, room - 2)
        rows.append(" " * indent + wrapped[0])
        rows.extend(" " * (indent + 2) + row for row in wrapped[1:])
    return rows, links

"""The reference solution as a diff against the learner's code: one view, so both
sides scroll together, marked with -/+ as well as colour."""

from __future__ import annotations

import difflib

from textual.content import Content
from textual.widgets import Static

from course.i18n import _


def diff_lines(mine: str, reference: str) -> list[tuple[str, str]]:
    """(mark, line) for the whole reference file: " " same, "-" only in yours,
    "+" only in the solution."""
    a, b = mine.splitlines(), reference.splitlines()
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.extend((" ", line) for line in b[j1:j2])
            continue
        out.extend(("-", line) for line in a[i1:i2])
        out.extend(("+", line) for line in b[j1:j2])
    return out


def diff_content(mine: str, reference: str) -> Content:
    styles = {" ": "", "-": "$error", "+": "$success"}
    lines = diff_lines(mine, reference)
    if not any(mark != " " for mark, _line in lines):
        head = Content.from_markup("[b $success]" + _("Your code is the reference solution, line for line.") + "[/]")
    else:
        head = Content.from_markup("[dim]" + _("- your line   + the solution's line") + "[/dim]")
    body = [head]
    for mark, line in lines:
        text = Content(f"{mark} {line}")
        body.append(text.stylize(styles[mark]) if styles[mark] else text)
    return Content("\n").join(body)


class DiffView(Static):
    def show(self, mine: str, reference: str) -> None:
        self.update(diff_content(mine, reference))

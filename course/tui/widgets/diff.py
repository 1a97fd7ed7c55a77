"""The reference solution as a diff against the learner's code: one view, so both
sides scroll together, marked with -/+ as well as colour.

Docstrings are folded to one line on both sides: the task text against the
solution's short docstring is a screenful of difference that says nothing about
the code. For the same reason comments are not compared."""

from __future__ import annotations

import ast
import difflib

from textual.content import Content
from textual.widgets import Static

from course.i18n import _

FOLDED = '"""…"""'


def fold_docstrings(source: str) -> list[str]:
    """The lines of `source`, each docstring (module, class, function) cut to one
    line at its indentation. A file that does not parse is left as it is."""
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return lines
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str) and first.end_lineno is not None):
                spans.append((first.lineno - 1, first.end_lineno, first.col_offset))
    for start, end, column in sorted(spans, reverse=True):
        lines[start:end] = [" " * column + FOLDED]
    return lines


def code_of(lines: list[str]) -> list[str]:
    """Each line without its comment and trailing spaces ("" for a blank or comment-only
    line). `#` inside a string stays; a file that does not tokenize keeps its lines whole."""
    import io
    import tokenize

    cut = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if token.type == tokenize.COMMENT:
                row, column = token.start
                cut[row - 1] = column
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return [line.rstrip() for line in lines]
    return [line[:cut[i]].rstrip() if i in cut else line.rstrip() for i, line in enumerate(lines)]


def diff_lines(mine: str, reference: str) -> list[tuple[str, str]]:
    """(mark, line) for the whole reference file: " " same, "-" only in yours,
    "+" only in the solution.

    Code is compared, not comments: a line of yours that differs only in its comment
    counts as the same, your comment-only lines (the starter's TODOs, your notes) are
    left out, and the solution's comments and blank lines show as they are."""
    a, b = fold_docstrings(mine), fold_docstrings(reference)
    a_code, b_code = code_of(a), code_of(b)
    a_at = [i for i, code in enumerate(a_code) if code.strip()]
    b_at = [j for j, code in enumerate(b_code) if code.strip()]
    out: list[tuple[str, str]] = []
    shown = 0  # the next line of the solution to show

    def solution_up_to(j: int, mark: str) -> None:
        nonlocal shown
        out.extend((" ", line) for line in b[shown:j])  # its comments and blank lines before line j
        out.append((mark, b[j]))
        shown = j + 1

    matcher = difflib.SequenceMatcher(None, [a_code[i] for i in a_at], [b_code[j] for j in b_at], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for j in b_at[j1:j2]:
                solution_up_to(j, " ")
            continue
        if j1 < j2:
            out.extend((" ", line) for line in b[shown:b_at[j1]])
            shown = b_at[j1]
        out.extend(("-", a[i]) for i in a_at[i1:i2])
        for j in b_at[j1:j2]:
            solution_up_to(j, "+")
    out.extend((" ", line) for line in b[shown:])
    return out


def diff_content(mine: str, reference: str) -> tuple[Content, int]:
    """The diff, and the line of it where the first difference is (0: none)."""
    styles = {" ": "", "-": "$error", "+": "$success"}
    lines = diff_lines(mine, reference)
    if not any(mark != " " for mark, _line in lines):
        head = Content.from_markup("[b $success]" + _("Your code is the reference solution, line for line.") + "[/]")
    else:
        # Two short lines: the diff does not wrap, so a long legend would run out of sight.
        head = Content.from_markup("[dim]" + _("- your line   + the solution's line") + "\n"
                                   + _("Docstrings folded ({folded}), comments not compared.").format(folded=FOLDED)
                                   + "[/dim]")
    body = [head]
    for mark, line in lines:
        text = Content(f"{mark} {line}")
        body.append(text.stylize(styles[mark]) if styles[mark] else text)
    first = next((number + head.plain.count("\n") for number, (mark, _line) in enumerate(lines, start=1)
                  if mark != " "), 0)
    return Content("\n").join(body), first


class DiffView(Static):
    def show(self, mine: str, reference: str) -> int:
        """Show the diff; returns the line of the first difference (0: none)."""
        text, first = diff_content(mine, reference)
        self.update(text)
        return first

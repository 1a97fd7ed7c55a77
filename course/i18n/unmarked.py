"""Messages the checks and the engine show a learner without marking them for translation.

`jaxlings doctor` counts them, so that it never calls an edition complete while a failed
check still shows English. Found by reading the code (ast), where a message is handed
over: the message of `fail()`, `CheckFailure()`, `LearnerFailure()`, the child's
`Failure()`, the template of `ProgramError()` and `EvaluatorFailure()`, a `what=`
description, an assignment to a failure's `.message`, and an `assert`'s message in a
check. A message is
unmarked when its text is written out (a literal, an f-string, a sum of them) rather than
passed through `_()` / `N_()`, and it holds prose: two English words in a row. Code such
as `relu(x)` alone is not prose.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

_PROSE = re.compile(r"[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}")
# The callable, and the position of its message among the positional arguments.
_MESSAGE_ARG = {"fail": 0, "CheckFailure": 0, "LearnerFailure": 1, "Failure": 1, "ProgramError": 0,
                "EvaluatorFailure": 0}


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _written_out(node: ast.expr) -> str:
    """The English written out in `node`, outside any call (a call such as `_()` marks it)."""
    if isinstance(node, ast.Call):
        return ""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else ""
    return " ".join(_written_out(child) for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr))


def unmarked_in(source: str, filename: str = "<code>", asserts: bool = True) -> list[tuple[int, str]]:
    """(line, text) of each unmarked message in `source`."""
    found = []

    def note(node: ast.expr | None) -> None:
        if node is not None:
            text = _written_out(node)
            if _PROSE.search(text):
                found.append((node.lineno, text.strip()))

    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Call):
            position = _MESSAGE_ARG.get(_name(node.func))
            if position is not None and len(node.args) > position:
                note(node.args[position])
            for keyword in node.keywords:
                if keyword.arg in ("what", "message"):
                    note(keyword.value)
        elif isinstance(node, ast.Assert) and asserts:
            note(node.msg)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "message" for t in targets):
                note(node.value)  # `failure.message = ...`
    return sorted(found)


def unmarked_messages(checks: Path, engine: Path) -> list[tuple[str, int, str]]:
    """(file, line, text) of every unmarked message in the check modules and the engine."""
    out = []
    for folder, pattern, asserts in ((checks, "test_*.py", True), (engine, "*.py", False)):
        for path in sorted(Path(folder).glob(pattern)):
            try:
                found = unmarked_in(path.read_text(encoding="utf-8"), str(path), asserts)
            except (OSError, SyntaxError, UnicodeDecodeError):
                continue
            out += [(path.name, line, text) for line, text in found]
    return out

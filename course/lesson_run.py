"""Run every code block of one lesson; print a JSON report as the last stdout line.

`python -m course.lesson_run LESSON.md`, in a fresh interpreter per lesson (the course's
tests and `jaxlings dev check` run it so), so that one
lesson's global settings (x64, key-reuse checking, forced devices) cannot leak
into another's. Torch blocks run in order in one namespace, JAX/plain blocks in
another, as documented in course/lessons.py.

What each block prints is kept for the comparison with what the lesson quotes
(tests/lesson_output.py): its stdout and its warnings ("Category: message"), in
the order they came, in all and per line of the block that wrote them, and the
text of the exception a `raises=` block raised.
"""

from __future__ import annotations

import ast
import importlib
import io
import json
import sys
import traceback
import warnings
from pathlib import Path

from course.lessons import load_lesson

MARKER = "@@jaxlings-lesson-report@@"
FLAGGED = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


def _preimport(blocks) -> None:
    """Import the lessons' top-level modules first, so that warnings a library
    emits while importing itself are not blamed on the lesson's code."""
    names: set[str] = set()
    for block in blocks:
        try:
            tree = ast.parse(block.code)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in sorted(names):
            try:
                importlib.import_module(name)
            except Exception:
                pass  # the block itself will report the failure


class _BlockOutput(io.TextIOBase):
    """Stands in for sys.stdout while one block runs: keeps what is written, and for
    each piece the line of the block that wrote it (the innermost frame of the
    block's code, so a print inside a function defined in the block counts for
    the print's own line)."""

    def __init__(self, where: str):
        self.where = where
        self.parts: list[str] = []
        self.by_line: dict[int, list[str]] = {}

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.parts.append(text)
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != self.where:
            frame = frame.f_back
        if frame is not None:
            self.by_line.setdefault(frame.f_lineno, []).append(text)
        return len(text)

    def text(self) -> str:
        return "".join(self.parts)


def run(path: Path) -> list[dict]:
    lesson = load_lesson(path)
    numbered = [(k, b) for k, b in enumerate(lesson.code_blocks()) if b.runs]
    blocks = [b for _, b in numbered]
    _preimport(blocks)
    namespaces = {"torch": {"__name__": "__lesson__"}, "jax": {"__name__": "__lesson__"}}
    results = []
    for index, block in numbered:
        where = f"{path.name}:{block.line}"
        entry = {"where": where, "index": index, "framework": block.framework, "ok": True, "error": "",
                 "exception": None}
        out = _BlockOutput(where)
        caught: list[warnings.WarningMessage] = []

        def show(message, category, filename, lineno, file=None, line=None):
            caught.append(warnings.WarningMessage(message, category, filename, lineno))
            out.write(f"{category.__name__}: {message}\n")

        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show  # restored when the block is done
            real_stdout, sys.stdout = sys.stdout, out
            try:
                code = compile(block.code, where, "exec", dont_inherit=True)  # no `annotations` future from this file
                exec(code, namespaces[block.framework])
            except BaseException as exc:  # noqa: BLE001 - report everything, incl. SystemExit
                names = {c.__name__ for c in type(exc).__mro__}
                if block.raises and block.raises in names:
                    entry["exception"] = {
                        "name": type(exc).__name__,
                        "qualname": f"{type(exc).__module__}.{type(exc).__qualname__}",
                        "text": "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n"),
                    }
                else:
                    entry["ok"] = False
                    entry["error"] = "".join(
                        traceback.format_exception_only(type(exc), exc)
                    ).strip()
                    tb = traceback.extract_tb(exc.__traceback__)
                    lines = [f"  {f.filename}:{f.lineno}" for f in tb if f.filename == where]
                    entry["error"] += ("\n" + "\n".join(lines)) if lines else ""
            else:
                if block.raises:
                    entry["ok"] = False
                    entry["error"] = f"expected {block.raises} to be raised, but the block ran without error"
            finally:
                sys.stdout = real_stdout
        entry["output"] = out.text()
        entry["lines"] = {str(n): "".join(parts) for n, parts in out.by_line.items()}
        # `warns=Name`: the block shows that warning on purpose (quoted after it).
        warns = next((w.split("=", 1)[1] for w in block.words[1:] if w.lower().startswith("warns=")), None)
        if warns and entry["ok"] and not any(w.category.__name__ == warns for w in caught):
            entry["ok"] = False
            entry["error"] = f"expected a {warns}, but the block gave none"
        bad = [w for w in caught if issubclass(w.category, FLAGGED) and w.category.__name__ != warns]
        if bad and entry["ok"]:
            entry["ok"] = False
            entry["error"] = "; ".join(
                f"{w.category.__name__}: {w.message} ({w.filename}:{w.lineno})" for w in bad
            )
        results.append(entry)
    return results


if __name__ == "__main__":
    report = run(Path(sys.argv[1]))
    # Lesson code prints too: the report is the line after the marker.
    print("\n" + MARKER + json.dumps(report), flush=True)

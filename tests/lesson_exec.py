"""Run every code block of one lesson; print a JSON report as the last stdout line.

Used by tests/test_lessons.py in a fresh interpreter per lesson, so that one
lesson's global settings (x64, key-reuse checking, forced devices) cannot leak
into another's. Torch blocks run in order in one namespace, JAX/plain blocks in
another, as documented in course/lessons.py.
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
import traceback
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course.lessons import load_lesson  # noqa: E402

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


def run(path: Path) -> list[dict]:
    lesson = load_lesson(path)
    blocks = [b for b in lesson.code_blocks() if b.runs]
    _preimport(blocks)
    namespaces = {"torch": {"__name__": "__lesson__"}, "jax": {"__name__": "__lesson__"}}
    results = []
    for block in blocks:
        where = f"{path.name}:{block.line}"
        entry = {"where": where, "framework": block.framework, "ok": True, "error": ""}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                code = compile(block.code, where, "exec", dont_inherit=True)  # no `annotations` future from this file
                exec(code, namespaces[block.framework])
            except BaseException as exc:  # noqa: BLE001 - report everything, incl. SystemExit
                names = {c.__name__ for c in type(exc).__mro__}
                if block.raises and block.raises in names:
                    pass
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
        bad = [w for w in caught if issubclass(w.category, FLAGGED)]
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

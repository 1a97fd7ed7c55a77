"""Every lesson is complete and every code block in it runs on the pinned versions.

Each lesson runs in a fresh interpreter (tests/lesson_exec.py): an error, a
missing expected exception, or any DeprecationWarning/FutureWarning fails it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from course.lessons import CodeBlock, SideBySide, load_lesson

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = tomllib.loads((ROOT / "lessons" / "course.toml").read_text(encoding="utf-8"))
LESSONS = [(lesson["name"], lesson["title"], ROOT / "lessons" / lesson["file"]) for lesson in MANIFEST["lessons"]]
IDS = [name for name, _, _ in LESSONS]
MARKER = "@@jaxlings-lesson-report@@"


@pytest.mark.parametrize(("name", "title", "path"), LESSONS, ids=IDS)
def test_lesson_has_what_every_lesson_needs(name, title, path):
    assert path.is_file(), f"lesson {name!r}: {path.relative_to(ROOT)} is missing"
    lesson = load_lesson(path)
    assert lesson.title == title, f"lesson {name!r}: first heading {lesson.title!r} != manifest title {title!r}"
    pairs = [s for s in lesson.segments if isinstance(s, SideBySide)]
    assert pairs, f"lesson {name!r} has no side-by-side PyTorch/JAX pair"
    blocks = lesson.code_blocks()
    pitfalls = [b for b in blocks if b.raises]
    assert pitfalls, f"lesson {name!r} shows no pitfall (a ```python raises=Error block)"
    # Each pitfall is followed by the text JAX prints, so the learner sees the real message.
    segments = lesson.segments
    for i, seg in enumerate(segments):
        if isinstance(seg, CodeBlock) and seg.raises:
            nxt = segments[i + 1] if i + 1 < len(segments) else None
            assert isinstance(nxt, CodeBlock) and nxt.language in ("text", "console", "pytb"), (
                f"lesson {name!r}, line {seg.line}: a raises= block must be followed by a "
                "```text block with the error message"
            )
    text = path.read_text(encoding="utf-8")
    assert re.search(r"https://\S+", text), f"lesson {name!r} links to no documentation page"


@pytest.mark.parametrize(("name", "title", "path"), LESSONS, ids=IDS)
def test_every_code_block_runs(name, title, path):
    if not path.is_file():
        pytest.fail(f"lesson {name!r}: {path.relative_to(ROOT)} is missing")
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "lesson_exec.py"), str(path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**__import__("os").environ, "PYTHONWARNINGS": "default"},
    )
    report_lines = [l for l in proc.stdout.splitlines() if l.startswith(MARKER)]
    assert proc.returncode == 0 and report_lines, (
        f"lesson runner crashed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    )
    report = json.loads(report_lines[-1][len(MARKER):])
    failures = [f"{r['where']} ({r['framework']}): {r['error']}" for r in report if not r["ok"]]
    assert not failures, "code blocks that fail:\n" + "\n".join(failures)
    assert report, f"lesson {name!r} has no runnable code"


def _map_rows(text: str) -> list[tuple[str, str]]:
    """(number, name) of each row of the course-map table that starts at its header."""
    start = text.index("| # | lesson | PyTorch → JAX |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append((cells[0], cells[1]))
    return rows


@pytest.mark.parametrize("where", ["README.md", "lessons/01_ecosystem.md"])
def test_course_map_lists_every_lesson_in_order(where):
    rows = _map_rows((ROOT / where).read_text(encoding="utf-8"))
    want = [(str(i), name) for i, name in enumerate(IDS, start=1)]
    assert rows == want, f"{where}: the course map must list every lesson of lessons/course.toml, in order"

"""Every lesson is complete, every code block in it runs on the pinned versions, and
what the lesson says a block prints is what it prints.

Each lesson runs in a fresh interpreter (course/lesson_run.py): an error, a
missing expected exception, or any DeprecationWarning/FutureWarning fails it. The
same run is then compared with the output both editions quote (```text blocks
after a block, `# →` comments; tests/lesson_output.py), so no block runs twice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from course.lesson_run import MARKER
from course.lessons import CodeBlock, SideBySide, load_lesson
from lesson_output import compare_lesson, translated_code_differs

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = tomllib.loads((ROOT / "lessons" / "course.toml").read_text(encoding="utf-8"))
LESSONS = [(lesson["name"], lesson["title"], ROOT / "lessons" / lesson["file"]) for lesson in MANIFEST["lessons"]]
IDS = [name for name, _, _ in LESSONS]


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


def run_lesson(path: Path) -> list[dict]:
    """Run every block of the lesson at `path` in a fresh interpreter; the report of
    course/lesson_run.py, one entry per runnable block."""
    proc = subprocess.run(
        [sys.executable, "-m", "course.lesson_run", str(path)],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
        env={**os.environ, "PYTHONWARNINGS": "default"},
    )
    report_lines = [l for l in proc.stdout.splitlines() if l.startswith(MARKER)]
    assert proc.returncode == 0 and report_lines, (
        f"lesson runner crashed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    )
    return json.loads(report_lines[-1][len(MARKER):])


@pytest.mark.parametrize(("name", "title", "path"), LESSONS, ids=IDS)
def test_every_code_block_runs_and_prints_what_both_editions_quote(name, title, path):
    if not path.is_file():
        pytest.fail(f"lesson {name!r}: {path.relative_to(ROOT)} is missing")
    report = run_lesson(path)
    failures = [f"{r['where']} ({r['framework']}): {r['error']}" for r in report if not r["ok"]]
    assert not failures, "code blocks that fail:\n" + "\n".join(failures)
    assert report, f"lesson {name!r} has no runnable code"

    english = load_lesson(path)
    problems = [f"{path.relative_to(ROOT)}, {p}" for p in compare_lesson(english, report)]
    japanese_path = ROOT / "lessons" / "ja" / path.name
    if japanese_path.is_file():
        japanese = load_lesson(japanese_path)
        # The quotes are matched to the run by block number and line: only valid for the
        # same blocks, where a Python block may differ only in its translated comments
        # (tests/test_i18n.py says which block differs).
        en_blocks, ja_blocks = english.code_blocks(), japanese.code_blocks()
        same = len(en_blocks) == len(ja_blocks) and all(
            (e.language, e.words) == (j.language, j.words)
            and (e.code == j.code or (e.language == "python" and translated_code_differs(e.code, j.code) is None))
            for e, j in zip(en_blocks, ja_blocks))
        assert same, f"lessons/ja/{path.name}: the code blocks differ from the English edition's"
        problems += [f"lessons/ja/{path.name}, {p}" for p in compare_lesson(japanese, report)]
    assert not problems, "quoted output that is not what the block prints:\n" + "\n\n".join(problems)


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


OLD_NAN_QUOTE = """# NaN

```python raises=FloatingPointError
jax.config.update("jax_debug_nans", True)
try:
    jax.jit(lambda x: jnp.sqrt(jnp.log(x)))(jnp.array([0.5, 2.0]))
finally:
    jax.config.update("jax_debug_nans", False)
```

```text
FloatingPointError: invalid value (nan) encountered in {op}
```

```python
print(jnp.arange(3) + 1)   # → {printed} — what the sum is
```
"""


@pytest.mark.parametrize(("op", "printed", "wrong"), [
    ("log", "[1 2 3]", "encountered in log"),         # the quote lesson 20 had: JAX names sqrt
    ("sqrt", "[1 2 4]", "`# → [1 2 4]`"),              # a printed value misquoted
    ("sqrt", "[1 2 3]", None),
])
def test_a_quote_that_is_not_what_the_block_prints_is_named(tmp_path, op, printed, wrong):
    """The comparison runs the real block: lesson 20's old NaN quote fails, as does a wrong
    `# →` value, and the true ones pass."""
    path = tmp_path / "nan.md"
    path.write_text("```python\nimport jax\nimport jax.numpy as jnp\n```\n\n"
                    + OLD_NAN_QUOTE.format(op=op, printed=printed), encoding="utf-8")
    report = run_lesson(path)
    assert all(r["ok"] for r in report), report
    problems = compare_lesson(load_lesson(path), report)
    if wrong is None:
        assert problems == []
    else:
        assert len(problems) == 1 and wrong in problems[0], problems

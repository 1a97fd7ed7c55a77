"""The core never imports the UI: the CLI, the grader and CI use it without Textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_core_modules_do_not_import_textual():
    code = (
        "import sys\n"
        "import course.catalog, course.engine.runner, course.progress, course.shell.commands, course.engine.checking, course.engine.wire\n"
        "import course.i18n.linebreak, course.i18n.state, course.i18n.unmarked, course.i18n.extract\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"textual imported by the core: {proc.stdout.strip()}"


def _imports_of(path: Path) -> set[str]:
    """Every module a source file imports, at the top or inside a function."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_data_flows_one_way_from_the_course_to_the_shell():
    """catalog and progress -> engine -> presentation: nothing below the shell imports it, and
    within the shell `watch` uses the commands while the commands never use `watch`."""
    course = REPO / "course"
    below = [p for p in course.glob("*.py")] + sorted((course / "engine").glob("*.py")) \
        + sorted((course / "i18n").glob("*.py"))
    for path in below:
        if path.name in ("cli.py", "__main__.py"):  # the entry point stands above every room
            continue
        shell = sorted(m for m in _imports_of(path) if m == "course.shell" or m.startswith("course.shell."))
        assert not shell, f"{path.relative_to(REPO)} imports the shell: {shell}"
    commands = _imports_of(course / "shell" / "commands.py")
    assert not any(m.startswith("course.shell.watching") for m in commands), \
        "course/shell/commands.py imports course.shell.watching: the two would import each other"


def test_the_engines_rooms_import_one_way():
    """The session (runner) uses the sandbox and the isolation tiers, which use the caches; none of
    them imports the session back. The one pair left is `programs` and `evaluator`: `programs`
    forwards each request to the evaluator process, whose serving loop runs `programs.evaluate`."""
    engine = REPO / "course" / "engine"
    graph = {}
    for path in engine.glob("*.py"):
        rooms = {m.split(".")[2] for m in _imports_of(path) if m.startswith("course.engine.")}
        graph[path.stem] = rooms - {path.stem}

    def reachable(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    in_cycles = sorted(room for room in graph if room in reachable(room))
    assert in_cycles == ["evaluator", "programs"], f"rooms that import themselves through others: {in_cycles}"

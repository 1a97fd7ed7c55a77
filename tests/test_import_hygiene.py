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


def _engine_graph(engine: Path) -> dict[str, set[str]]:
    """Which `course.engine` modules each engine module imports, at the top or inside a function."""
    graph = {}
    for path in sorted(engine.glob("*.py")):
        rooms = {m.split(".")[2] for m in _imports_of(path) if m.startswith("course.engine.")}
        graph[path.stem] = rooms - {path.stem}
    return graph


def _a_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, as the modules along it back to the first (a -> b -> a), or None."""
    done: set[str] = set()
    for start in sorted(graph):
        path, on_path, todo = [], set(), [(start, iter(sorted(graph.get(start, ()))))]
        path.append(start)
        on_path.add(start)
        while todo:
            node, nexts = todo[-1]
            nxt = next(nexts, None)
            if nxt is None:
                todo.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
            elif nxt in on_path:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in done:
                todo.append((nxt, iter(sorted(graph.get(nxt, ())))))
                path.append(nxt)
                on_path.add(nxt)
    return None


def test_a_cycle_is_found_and_named():
    assert _a_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _a_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_engines_rooms_import_one_way():
    """The session (runner) uses the sandbox and the isolation tiers, which use the caches; none of
    them imports the session back. Programs flow one way too: `programs` (the checks' API) forwards
    each request to the evaluator process (`evaluator`), whose loop has `program_reader` answer it;
    both sides share `program_types`, and neither imports the other."""
    cycle = _a_cycle(_engine_graph(REPO / "course" / "engine"))
    assert cycle is None, "engine modules that import themselves through others: " + " -> ".join(cycle)


def _importers_of(module: str, paths) -> list[tuple[Path, str]]:
    """(file, enclosing function or "<module>") of every import of `module` in `paths`."""
    import ast

    found = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes = {}
        for func in ast.walk(tree):
            if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(func):
                    scopes.setdefault(node, func.name)  # the outermost function that holds it
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            if module in names:
                found.append((path, scopes.get(node, "<module>")))
    return found


def test_only_the_evaluators_loop_imports_the_program_reader():
    """MLIR and XLA read a learner's program only in the evaluator process: the one import of the
    reader is in `evaluator.serve`, the loop that process runs, and the reader never imports the
    evaluator (it answers requests; it never forwards one)."""
    course = REPO / "course"
    importers = _importers_of("course.engine.program_reader", sorted(course.rglob("*.py")))
    assert [(p.relative_to(REPO).as_posix(), where) for p, where in importers] == \
        [("course/engine/evaluator.py", "serve")]
    reader = course / "engine" / "program_reader.py"
    assert not any(m == "course.engine.evaluator" or m.startswith("course.engine.evaluator.")
                   for m in _imports_of(reader)), "program_reader imports the evaluator"
    assert not any(m == "course.engine.programs" for m in _imports_of(reader)), "program_reader imports programs"
    # The cost walk reads MLIR's objects: only the reader, in the evaluator process, imports it.
    walkers = _importers_of("course.engine.program_cost", sorted(course.rglob("*.py")))
    assert [(p.relative_to(REPO).as_posix(), where) for p, where in walkers] == \
        [("course/engine/program_reader.py", "<module>")]
    # Requests flow from the checks' API to the evaluator, never back.
    evaluator = _imports_of(course / "engine" / "evaluator.py")
    assert not any(m.startswith(("course.engine.programs", "course.engine.evidence")) for m in evaluator)


def test_the_shared_program_types_import_only_words():
    """Both sides import `program_types`; it imports neither of them (nor anything else of the engine's)."""
    imported = _imports_of(REPO / "course" / "engine" / "program_types.py")
    rooms = {m.split(".")[2] for m in imported if m.startswith("course.engine.")}
    assert rooms <= {"words"}, f"program_types imports {sorted(rooms - {'words'})}"
    assert not any(m.startswith("course.") and not m.startswith("course.engine.") for m in imported)


def test_no_function_asks_which_process_it_is_in():
    """The evaluator's side and the trusted side are separate modules, not one module switched by a flag."""
    from course.engine import programs

    assert not hasattr(programs, "HERE")


def test_every_engine_module_stays_small():
    """The trust boundary is read by whoever attacks or extends it: one job per module, none over 600 lines."""
    long = {p.name: n for p in sorted((REPO / "course" / "engine").glob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, f"engine modules over 600 lines: {long}"

"""`jaxlings dev check`: verify a course the way the course's own test suite verifies jaxlings.

For the course at `root` it finds, and reports as `file:line: problem`:

- the manifest's problems, and files it names that are missing;
- checks that import the engine's private modules (only `course.authoring` is public);
- tests that declare no evidence, or a `reported` judgment with no cross-check (the ledger);
- a starter that passes its check;
- a solution, or an alternative (`alternatives/<exercise>/*.py`), that fails it for one of the
  seeds tried;
- an attack (`attacks/<exercise>/*.py`) that passes, or a near miss (`near_*.py`) whose failure
  does not match the MESSAGE it declares, or that declares none;
- a check that errors (a bug of the check, not of the file checked);
- a test that says it judges from a program but ran none when the solution was checked, or that
  asked nothing of the learner's code at all;
- a lesson's Python block that fails (each lesson runs in a fresh interpreter).

Every file checked runs as a learner's would: in an isolated child, through `CheckSession`.
Nothing in the course folder is written.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from course.catalog import MANIFEST, Catalog, Exercise, load_catalog, validate
from course.i18n import _

PUBLIC = "course.authoring"


@dataclass(frozen=True)
class Problem:
    path: str  # relative to the course root
    line: int
    message: str

    def __str__(self) -> str:
        return _printable(f"{self.path}:{self.line}: {self.message}")


def _printable(text: str) -> str:
    """Control, format and surrogate characters (from a file's output, a name) written as escapes."""
    import unicodedata

    return "".join(ch.encode("unicode_escape").decode("ascii")
                   if unicodedata.category(ch)[0] == "C" or unicodedata.category(ch) in ("Zl", "Zp") else ch
                   for ch in text)


def one_line(text: str, limit: int = 400) -> str:
    """A multi-line message as one line (its lines joined by ' / '), cut at `limit` characters."""
    joined = " / ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return joined if len(joined) <= limit else joined[: limit - 1] + "…"


# -- attack files: what they declare -------------------------------------------------


def literal(path: Path, name: str) -> str | None:
    """A module-level `name = <literal>` of a Python file, read from its source (never imported)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [name]:
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


def unnamed_mistake(path: Path, messages: Iterable[str | None]) -> str | None:
    """The MESSAGE a near-miss file declares, when none of `messages` matches it; None when one does,
    or when the file declares none. Every failing check is shown to the learner, so the mistake may
    be named by any of them."""
    expected = literal(path, "MESSAGE")
    shown = "\n".join(m or "" for m in messages)
    return expected if expected and not re.search(expected, shown, re.IGNORECASE | re.DOTALL) else None


# -- static checks of the check modules ---------------------------------------------


def _relative(root: Path, path: Path) -> str:
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def private_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a `course` module other than the public one."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] if node.module != "course" else [f"course.{a.name}" for a in node.names]
        for name in names:
            if (name == "course" or name.startswith("course.")) and name != PUBLIC:
                found.append((node.lineno, name))
    return found


def _import_check(path: Path):
    name = f"jaxlings_dev_check_{path.stem}_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(name, None)
    return module


def _error_line(exc: BaseException, path: Path) -> int:
    if isinstance(exc, SyntaxError) and exc.lineno:
        return exc.lineno
    tb = exc.__traceback__
    line = 1
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve() == path.resolve():
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def test_functions(path: Path) -> tuple[dict[str, Callable], Problem | None]:
    """The check module's test functions by name, or the problem that stopped its import."""
    try:
        module = _import_check(path)
    except BaseException as e:  # noqa: BLE001 - an author's module may raise anything, SystemExit included
        return {}, Problem(str(path), _error_line(e, path), _("the check cannot be imported: {error}").format(error=one_line(repr(e))))
    tests = {}
    for name, value in vars(module).items():
        if name.startswith("test") and callable(value) and getattr(value, "__module__", None) == module.__name__:
            tests[name] = value
    return tests, None


def ledger_problems(root: Path, check: Path) -> tuple[list[Problem], dict[str, tuple]]:
    """The evidence each test declares, and the problems with it (module import, private imports)."""
    from course.authoring import SOURCES, declared

    rel = _relative(root, check)
    problems = [Problem(rel, line, _("imports {module}, which is private to jaxlings: import from {public}").format(module=module, public=PUBLIC))
                for line, module in private_imports(check)]
    tests, broken = test_functions(check)
    if broken is not None:
        return [*problems, Problem(rel, broken.line, broken.message)], {}
    if not tests:
        problems.append(Problem(rel, 1, _("the check has no test functions (def test_...)")))
    declarations = {}
    for name, fn in tests.items():
        line = getattr(getattr(fn, "__code__", None), "co_firstlineno", 1)
        rows = declared(fn)
        declarations[name] = rows
        if not rows:
            problems.append(Problem(rel, line, _("{name} declares no evidence: decorate it with @evidence.recomputed, .program or .reported "
                                                 "(docs/authoring.md)").format(name=name)))
        for row in rows:
            if row.source not in SOURCES:
                problems.append(Problem(rel, line, _("{name}: unknown evidence source {source!r}").format(name=name, source=row.source)))
            elif row.source == "reported" and not (row.cross_check or "").strip():
                problems.append(Problem(rel, line, _("{name} judges from a value the learner's process reports ({evidence}) and "
                                                     "nothing here cross-checks it: run it as a program in the "
                                                     "evaluator, recompute it here, or name the cross-check").format(
                                                       name=name, evidence=one_line(row.evidence, 160))))
    return problems, declarations


def trace_problems(rel: str, check: Path, trace: dict, declarations: dict[str, tuple],
                   passed: set[str]) -> list[Problem]:
    """What each test that passed did when the solution was checked, against what it declares. Only
    tests that take `learner` themselves are judged: one that takes a fixture built from it may judge
    evidence that fixture asked for while an earlier test ran."""
    problems = []
    functions = _functions(check)
    lines = {name: fn.lineno for name, fn in functions.items()}
    takes_learner = {name for name, fn in functions.items() if "learner" in [a.arg for a in fn.args.args]}
    done: dict[str, dict] = {}
    for test, counts in trace.items():
        if test not in passed:
            continue  # skipped here (one device, no GPU): it did nothing to judge
        base = test.split("[", 1)[0]
        merged = done.setdefault(base, {})
        for key, n in counts.items():
            merged[key] = merged.get(key, 0) + n
    for name, counts in done.items():
        if name not in takes_learner:
            continue
        rows = declarations.get(name, ())
        line = lines.get(name, 1)
        if not sum(counts.get(k, 0) for k in ("call", "probe", "has")):
            problems.append(Problem(rel, line, _("{name} asked nothing of the learner's code when the solution was checked: "
                                                 "it judges nothing the learner wrote").format(name=name)))
        if rows and all(r.source == "program" for r in rows) and not counts.get("programs"):
            problems.append(Problem(rel, line, _("{name} declares program evidence, but the evaluator read or ran no program "
                                                 "when the solution was checked (use run_jitted or run_lowered)").format(
                                                   name=name)))
    return problems


def _functions(check: Path) -> dict[str, ast.FunctionDef]:
    """The module-level functions of a check, by name, read from its source."""
    try:
        tree = ast.parse(check.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {}
    return {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _test_params(check: Path) -> dict[str, list[str]]:
    return {name: [a.arg for a in fn.args.args] for name, fn in _functions(check).items()}


def _test_lines(check: Path) -> dict[str, int]:
    return {name: fn.lineno for name, fn in _functions(check).items()}


# -- runs -------------------------------------------------------------------------


def _failing(result) -> list:
    return [c for c in result.checks if c.outcome in ("failed", "error")]


def _first_failure(result, check_rel: str, lines: dict[str, int]) -> str:
    failing = _failing(result)
    name = failing[0].name.split("[", 1)[0] if failing else ""
    where = f" ({check_rel}:{lines[name]})" if name in lines else ""
    return f"{failing[0].name if failing else 'check'}{where}: {one_line(result.message)}"


def run_files(root: Path, catalog: Catalog, exercise: Exercise, seeds: list[int], session,
              declarations: dict[str, tuple], say: Callable[[str], None]) -> list[Problem]:
    """The starter, the solution, the alternatives and the attacks of one exercise, checked."""
    problems: list[Problem] = []
    check = exercise.check_path()
    check_rel = _relative(root, check)
    lines = _test_lines(check)

    def run(path: Path, seed: int | None):
        return session.run(exercise, learner_file=path, seed=seed)

    def errored(rel: str, result, seed) -> bool:
        if result.cause == "check_error":
            problems.append(Problem(rel, 1, _("the check errors (a bug of the check) with seed {seed}: {failure}").format(
                                                seed=seed, failure=_first_failure(result, check_rel, lines))))
            return True
        return False

    # The starter (and its editions in starters/<lang>/): must fail, for a learner's cause.
    starters = [root / "exercises" / exercise.file, *sorted((root / "starters").glob(f"*/{exercise.file}"))]
    for path in starters:
        if not path.is_file():
            continue
        rel = _relative(root, path)
        say(f"{exercise.name}: starter {rel}")
        result = run(path, seeds[0])
        if result.passed:
            problems.append(Problem(rel, 1, _("the starter passes its check ({check}): a learner would be done before "
                                              "starting (seed {seed})").format(check=check_rel, seed=result.seed)))
        else:
            errored(rel, result, result.seed)

    # The solution and every alternative: pass for every seed; the solution's first run is traced.
    correct = [exercise.solution_path(), *sorted((root / "alternatives" / exercise.name).glob("*.py"))]
    for k, path in enumerate(correct):
        if not path.is_file():
            continue
        rel = _relative(root, path)
        for i, seed in enumerate(seeds):
            say(f"{exercise.name}: {'solution' if k == 0 else 'alternative'} {rel}, seed {seed}")
            result = run(path, seed)
            if errored(rel, result, seed):
                break
            if not result.passed:
                problems.append(Problem(rel, 1, _("fails its check with seed {seed}: {failure}").format(
                                                    seed=seed, failure=_first_failure(result, check_rel, lines))))
                break
            if k == 0 and i == 0:
                passed = {c.name for c in result.checks if c.outcome == "passed"}
                problems += trace_problems(check_rel, check, result.trace, declarations, passed)

    # The attacks: fail, for a learner's cause, naming the mistake where they declare one.
    for path in sorted((root / "attacks" / exercise.name).glob("*.py")):
        rel = _relative(root, path)
        say(f"{exercise.name}: attack {rel}")
        if path.stem.startswith("near_") and not literal(path, "MESSAGE"):
            problems.append(Problem(rel, 1, _("a near miss declares MESSAGE = r\"...\": a regular expression the failure "
                                              "message must match")))
        result = run(path, seeds[0])
        if result.passed:
            doc = one_line((ast.get_docstring(ast.parse(path.read_bytes())) or "").split("\n\n")[0], 160)
            problems.append(Problem(rel, 1, _("the attack passes the check (seed {seed})").format(seed=result.seed)
                                            + (f": {doc}" if doc else "")))
            continue
        if errored(rel, result, result.seed):
            continue
        shown = [result.message, *(c.message for c in _failing(result))]
        missing = unnamed_mistake(path, shown)
        if missing is not None:
            problems.append(Problem(rel, _assignment_line(path, "MESSAGE"),
                                    _("fails, but no failure message matches /{expected}/ (seed {seed}): {message}").format(
                                        expected=missing, seed=result.seed, message=one_line(result.message, 300))))
    return problems


def _assignment_line(path: Path, name: str) -> int:
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return 1
    return next((n.lineno for n in tree.body if isinstance(n, ast.Assign)
                 and [getattr(t, "id", None) for t in n.targets] == [name]), 1)


# -- lessons --------------------------------------------------------------------


def lesson_problems(root: Path, catalog: Catalog, say: Callable[[str], None], timeout: float = 600) -> list[Problem]:
    """Run every lesson's Python blocks, each lesson (and each translation) in a fresh interpreter."""
    from course.lesson_run import MARKER

    problems = []
    paths = []
    for lesson in catalog.lessons:
        paths.append(root / "lessons" / lesson.file)
        paths += sorted(p for p in (root / "lessons").glob(f"*/{lesson.file}") if p.is_file())
    for path in paths:
        if not path.is_file():
            continue  # the manifest's check reports it
        rel = _relative(root, path)
        say(f"lesson {rel}")
        try:
            proc = subprocess.run([sys.executable, "-m", "course.lesson_run", str(path)], cwd=root,
                                  capture_output=True, text=True, timeout=timeout,
                                  env={**os.environ, "PYTHONWARNINGS": "default"})
        except subprocess.TimeoutExpired:
            problems.append(Problem(rel, 1, _("the lesson's code ran for more than {seconds:g} s").format(seconds=timeout)))
            continue
        marked = [ln for ln in proc.stdout.splitlines() if ln.startswith(MARKER)]
        if proc.returncode != 0 or not marked:
            problems.append(Problem(rel, 1, _("the lesson's code stopped its interpreter (exit {code}): {error}").format(
                                                code=proc.returncode, error=one_line(proc.stderr[-600:]))))
            continue
        for entry in json.loads(marked[-1][len(MARKER):]):
            if not entry["ok"]:
                line = int(entry["where"].rsplit(":", 1)[-1])
                problems.append(Problem(rel, line, _("this {framework} block fails: {error}").format(
                                                       framework=entry["framework"] or "Python",
                                                       error=one_line(entry["error"]))))
    return problems


# -- the whole course ------------------------------------------------------------


def verify(root: Path, *, seeds: list[int], exercises: list[str] | None = None, lessons: bool = True,
           say: Callable[[str], None] = lambda line: None) -> list[Problem]:
    """Every problem of the course at `root` (empty: the course is sound)."""
    from course.engine.runner import CheckSession

    root = Path(root).resolve()
    manifest_rel = f"lessons/{MANIFEST}"
    problems = [Problem(manifest_rel, _toml_line(p), p) for p in validate(root)]
    problems += unfinished(root)
    catalog = load_catalog(root, strict=False)
    chosen = [e for e in catalog.exercises if not exercises or e.name in exercises]
    unknown = sorted(set(exercises or ()) - {e.name for e in catalog.exercises})
    problems += [Problem(manifest_rel, 1, _("there is no exercise named {name!r}").format(name=name)) for name in unknown]
    runnable = []
    for ex in chosen:
        check = ex.check_path()
        if not check.is_file() or not ex.solution_path().is_file():
            continue  # validate() reported it
        found, declarations = ledger_problems(root, check)
        problems += found
        runnable.append((ex, declarations))
    if runnable:
        with CheckSession() as session:
            for ex, declarations in runnable:
                problems += run_files(root, catalog, ex, seeds, session, declarations, say)
    if lessons:
        problems += lesson_problems(root, catalog, say)
    return problems


TODO_MARK = "TODO (author)"
AUTHORED = ("lessons", "exercises", "starters", "solutions", "checks", "alternatives", "attacks")


def unfinished(root: Path) -> list[Problem]:
    """Every place the templates marked for the author and the author has not filled in yet."""
    problems = []
    for folder in AUTHORED:
        for path in sorted((root / folder).rglob("*")):
            if not path.is_file() or path.suffix not in (".py", ".md", ".toml") or "__pycache__" in path.parts:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if TODO_MARK in line:
                    problems.append(Problem(_relative(root, path), number,
                                            _("still to fill in: {line}").format(line=one_line(line, 160))))
    return problems


def _toml_line(problem: str) -> int:
    m = re.search(r"line (\d+)", problem)
    return int(m.group(1)) if m else 1

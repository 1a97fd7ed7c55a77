"""The messages of the checks and the engine, read as code: marked for translation, and
formatted with exactly the fields their text names.

A translated message is formatted after translation, so a field the English leaves out
(or a positional `{}`, which a translator cannot reorder) breaks only in another language,
and a name that shadows `_` inside a function breaks the first message it shows.
"""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from course.i18n.unmarked import unmarked_in

ROOT = Path(__file__).resolve().parent.parent
CHECKS = ROOT / "course" / "checks"
ENGINE = ROOT / "course" / "engine"
FILES = sorted([*CHECKS.glob("*.py"), *ENGINE.glob("*.py")])
MARKERS = ("_", "N_")


def _fields(text: str) -> tuple[set[str], list[str]]:
    """The named fields of a format string, and the positional ones (`{}`, `{0}`) it uses."""
    named, positional = set(), []
    for _literal, field, spec, _conversion in string.Formatter().parse(text):
        if field is not None:
            root = field.split(".")[0].split("[")[0]
            if root == "" or root.isdigit():
                positional.append("{" + field + "}")
            else:
                named.add(root)
        if spec:
            inner_named, inner_positional = _fields(spec)
            named |= inner_named
            positional += inner_positional
    return named, positional


def _marked(node: ast.expr, constants: dict[str, str]) -> str | None:
    """The message text of `_("...")` / `N_("...")` (or `_(NAME)` with NAME = N_("...") at module level)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in MARKERS
            and len(node.args) == 1):
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.Name):
        return constants.get(arg.id)
    return None


def _module_constants(tree: ast.Module) -> dict[str, str]:
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            text = _marked(node.value, {})
            if text is not None:
                out[node.targets[0].id] = text
    return out


def format_problems(source: str, filename: str) -> list[str]:
    """Each `_("...").format(...)` whose keywords are not exactly the named fields of its text."""
    tree = ast.parse(source, filename)
    constants = _module_constants(tree)
    problems = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format"):
            continue
        text = _marked(node.func.value, constants)
        if text is None:
            continue
        where = f"{filename}:{node.lineno}: {text[:70]!r}"
        try:
            named, positional = _fields(text)
        except ValueError as e:
            problems.append(f"{where}: not a format string ({e})")
            continue
        if positional:
            problems.append(f"{where}: positional fields {positional}; name them")
        if node.args or any(k.arg is None for k in node.keywords):
            problems.append(f"{where}: .format() given positional arguments or **mapping; pass each field by name")
            continue
        given = {k.arg for k in node.keywords}
        if given != named:
            missing, extra = sorted(named - given), sorted(given - named)
            problems.append(f"{where}: fields not given {missing}, arguments the text does not use {extra}")
    return problems


# The engine's errors take a template (marked with N_) and its fields by name: `ProgramError(TEMPLATE,
# name=...)`; the template is formatted where the error is shown, in the language in use.
TEMPLATED = ("ProgramError", "EvaluatorFailure")
# The templates a ProgramError may carry, shared by the trusted side and the evaluator.
PROGRAM_TYPES = ENGINE / "program_types.py"


def template_problems(source: str, filename: str, shared: dict[str, str] | None = None) -> list[str]:
    """Each `ProgramError(...)` / `EvaluatorFailure(...)` whose template is not a marked text, or
    whose keywords are not exactly the named fields of its text. `shared`: constants of another
    module, named as `programs.NAME` (or imported by name)."""
    tree = ast.parse(source, filename)
    constants = {**(shared or {}), **_module_constants(tree)}
    problems = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _callee(node.func) in TEMPLATED):
            continue
        where = f"{filename}:{node.lineno}"
        first = node.args[0] if node.args else None
        text = None
        if isinstance(first, ast.Attribute):
            text = constants.get(first.attr)
        elif first is not None:
            text = _marked(first, constants) if isinstance(first, ast.Call) else \
                constants.get(first.id) if isinstance(first, ast.Name) else None
        if text is None or len(node.args) != 1:
            problems.append(f"{where}: the first argument is not a template marked with N_ (and the only positional one)")
            continue
        if any(k.arg is None for k in node.keywords):
            problems.append(f"{where}: {text[:70]!r} given a **mapping; pass each field by name")
            continue
        named, positional = _fields(text)
        given = {k.arg for k in node.keywords}
        if positional or given != named:
            problems.append(f"{where}: {text[:70]!r}: fields not given {sorted(named - given)}, arguments the text "
                            f"does not use {sorted(given - named)}, positional fields {positional}")
    return problems


def _callee(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def shadowed_underscore(source: str, filename: str) -> list[str]:
    """Functions that call `_()` while binding `_` themselves (`for _ in ...`, `a, _ = ...`): there
    `_` is a local name, and the call fails (UnboundLocalError, or calls what was bound)."""
    problems = []
    for func in ast.walk(ast.parse(source, filename)):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        binds, calls = False, False
        # The function's own scope: nested functions, lambdas and comprehensions have theirs.
        todo = list(func.body)
        while todo:
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                                 ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                continue
            if isinstance(node, ast.Name) and node.id == "_" and isinstance(node.ctx, (ast.Store, ast.Del)):
                binds = True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_":
                calls = True
            todo.extend(ast.iter_child_nodes(node))
        if binds and calls:
            problems.append(f"{filename}:{func.lineno}: {func.name} binds `_` and calls `_()`")
    return problems


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_every_formatted_message_is_given_exactly_its_named_fields():
    problems = [p for path in FILES for p in format_problems(_read(path), path.relative_to(ROOT).as_posix())]
    assert not problems, "\n".join(problems)


def test_no_function_that_shows_a_message_rebinds_underscore():
    problems = [p for path in FILES for p in shadowed_underscore(_read(path), path.relative_to(ROOT).as_posix())]
    assert not problems, "\n".join(problems)


def test_every_program_error_names_a_marked_template_and_exactly_its_fields():
    shared = _module_constants(ast.parse(_read(PROGRAM_TYPES)))
    problems = [p for path in FILES for p in template_problems(_read(path), path.relative_to(ROOT).as_posix(), shared)]
    assert not problems, "\n".join(problems)


def test_every_template_the_evaluator_may_send_is_one_the_trusted_side_accepts():
    """What program_types.py marks is what a ProgramError raised in the evaluator may say: each is
    in MESSAGES (the only templates read back from a reply), with named fields only."""
    from course.engine import program_types

    marked = set(_module_constants(ast.parse(_read(PROGRAM_TYPES))).values())
    assert marked == set(program_types.MESSAGES)
    for text in program_types.MESSAGES:
        assert not _fields(text)[1], text


@pytest.mark.parametrize("source, expected", [
    ('T = N_("{a} of {b}")\nraise ProgramError(T, a=1, b=2)', []),
    ('raise ProgramError(N_("no {a}"), a=1)', []),
    ('raise EvaluatorFailure(programs.T, a=1)', []),
    ('T = N_("{a} of {b}")\nraise ProgramError(T, a=1)', ["fields not given ['b']"]),
    ('raise ProgramError(N_("plain"), c=3)', ["arguments the text does not use ['c']"]),
    ('raise ProgramError(f"the program is {n} long")', ["not a template marked"]),
    ('raise ProgramError(text)', ["not a template marked"]),
    ('T = N_("{a}")\nraise ProgramError(T, **fields)', ["**mapping"]),
])
def test_the_template_reader_sees_what_is_off(source, expected):
    problems = "\n".join(template_problems(source, "<case>", {"T": "{a}"}))
    assert bool(problems) == bool(expected), problems
    for part in expected:
        assert part in problems


@pytest.mark.parametrize("source, expected", [
    ('_("{a} and {b:.3f}").format(a=1, b=2)', []),
    ('_("{a} and {b}").format(a=1)', ["fields not given ['b']"]),
    ('_("{a}").format(a=1, c=3)', ["arguments the text does not use ['c']"]),
    ('_("{} and {a}").format(1, a=2)', ["positional fields ['{}']", "positional arguments"]),
    ('_("{x!r:.{width}}").format(x=1)', ["fields not given ['width']"]),
    ('_("{{literal}} {a}").format(a=1)', []),
    ('HINT = N_("{n} left")\ndef f():\n    return _(HINT).format(count=1)', ["fields not given ['n']"]),
])
def test_the_format_reader_sees_what_is_off(source, expected):
    problems = "\n".join(format_problems(source, "<case>"))
    assert bool(problems) == bool(expected)
    for part in expected:
        assert part in problems


def test_the_shadowing_reader_sees_a_loop_variable():
    assert shadowed_underscore("def f():\n    for _ in range(2):\n        fail(_('x'))\n", "<case>")
    assert shadowed_underscore("def f(t):\n    a, _ = t\n    return _('x')\n", "<case>")
    assert not shadowed_underscore("def f():\n    [0 for _ in range(2)]\n    return _('x')\n", "<case>")
    assert not shadowed_underscore("def f():\n    for _ in range(2):\n        pass\n", "<case>")


def test_no_check_or_engine_message_is_left_unmarked():
    found = [f"{path.relative_to(ROOT).as_posix()}:{line}: {text[:80]}"
             for path in FILES
             for line, text in unmarked_in(_read(path), str(path), asserts=path.parent == CHECKS)]
    assert not found, f"{len(found)} message(s) not marked for translation:\n" + "\n".join(found[:40])


# A first failure says what is wrong and where; the way to fix it comes with the hints, one
# step at a time. These are the fixes that some checks used to print in full.
FIXES_IN_HINTS = {
    "jit_branch": ["jnp.sqrt(jnp.where(big, sq, 1.0))", "jnp.where(big, g * (max_norm / norm), g)",
                   "jnp.maximum(norm, max_norm)"],
    "immutable_updates": ["x.at[index].add(src)"],
}


@pytest.mark.parametrize("name", sorted(FIXES_IN_HINTS))
def test_a_check_names_the_mistake_and_leaves_the_fix_to_the_hints(name):
    from course import i18n
    from course.catalog import load_catalog

    exercise = load_catalog(ROOT).exercise(name)
    source = (CHECKS / f"{exercise.check}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    constants = _module_constants(tree)
    messages = [text for node in ast.walk(tree) if (text := _marked(node, constants))]
    assert messages
    for fix in FIXES_IN_HINTS[name]:
        assert not [m for m in messages if fix in m], f"a message of {exercise.check} gives away {fix}"
        assert any(fix in hint for hint in exercise.hints), f"no hint of {name} says {fix}"
        try:
            i18n.set_language("ja")
            assert all(i18n.content(hint) != hint for hint in exercise.hints), f"a hint of {name} is not in Japanese"
            assert any(fix in i18n.content(hint) for hint in exercise.hints), f"no Japanese hint says {fix}"
        finally:
            i18n.set_language(i18n.DEFAULT)

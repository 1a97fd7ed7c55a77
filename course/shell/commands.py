"""The course's terminal commands: list, check, watch, hint, reset, solution, verify, doctor, lesson.

Wired by `course/cli.py`. Exit codes scripts can trust: 0 pass/ok, 1 fail,
2 usage or manifest error. Read commands take `--json`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

# Reset lives in the core module course.workspace; the app still imports these names from here.
from course.i18n import N_, _, join_sentences, ngettext
from course.workspace import ResetError, pristine_starter, restore_starter  # noqa: F401

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    if name in ("solution", "lesson"):
        parser.add_argument("name", help=_("exercise name, number or file") if name != "lesson"
                            else _("lesson name, number or file (or an exercise's name)"))
    elif name in ("check", "watch", "hint", "reset"):
        # The same default everywhere: the exercise `jaxlings list` marks as next (rustlings' "current").
        parser.add_argument("name", nargs="?", help=_("exercise name, number or file (default: the next pending one)"))
    if name == "check":
        parser.add_argument("--short", action="store_true", help=_("show only the first failing check"))
    if name in ("check", "verify"):
        parser.add_argument("--seed", type=int, help=_("seed for the checks' random inputs (default: a fresh one)"))
    if name == "lesson":
        parser.add_argument("--no-pager", action="store_true", help=_("print straight to the terminal, without $PAGER"))
    if name == "watch":
        parser.add_argument("--poll", action="store_true",
                            help=_("poll the file for changes (for WSL, network drives, containers)"))
    if name == "reset":
        parser.add_argument("--yes", "-y", action="store_true",
                            help=_("don't ask first (your code is still kept in .jaxlings/backups/)"))
    if name in ("list", "check", "hint", "solution", "verify", "doctor"):
        parser.add_argument("--json", action="store_true", help=_("print machine-readable JSON"))
    if name == "doctor":
        parser.add_argument("--grading", action="store_true",
                            help=_("also say which isolation `jaxlings grade` would use here"))


def run(args: argparse.Namespace) -> int:
    handler = globals().get(f"cmd_{args.command}")
    if handler is None:
        print(_("jaxlings: unknown command {command!r}").format(command=args.command), file=sys.stderr)
        return EXIT_USAGE
    return handler(args)


def _console() -> Console:
    from course.shell.terminal import ShellConsole

    return ShellConsole(highlight=False)


def _err(message: str) -> None:
    from course.shell.terminal import ShellConsole

    ShellConsole(stderr=True, highlight=False, soft_wrap=True).print(_("[bold red]error:[/] {message}").format(message=escape(message)))


def _catalog():
    from course.catalog import ManifestError, load_catalog

    try:
        return load_catalog()
    except ManifestError as e:
        _err(_("the course manifest is broken; run `jaxlings doctor`.") + f"\n{e}")
        return None


def _named_or_current(catalog, name: str | None, command: str):
    """(exercise, None) for `name`, or the current exercise when no name was given; else
    (None, exit code): 0 when nothing is pending (already said), 2 for an unknown name."""
    if name is None:
        ex = _current(catalog, command)
        return ex, EXIT_OK
    ex = _exercise(catalog, name)
    return ex, EXIT_USAGE


def _current(catalog, verb: str):
    """The next pending exercise, said aloud for a command that was given none; None when all are done."""
    from course.progress import Progress

    exercise = Progress.load().next_pending(catalog)
    if exercise is None:
        _console().print(_("[green]Every exercise is done.[/] Name the one to {verb}: `jaxlings {verb} NAME`.").format(
            verb=verb))
    return exercise


def _exercise(catalog, name: str):
    from course.shell.lookup import NotFound, find_exercise

    try:
        return find_exercise(catalog, name)
    except NotFound as e:
        _err(str(e))
        return None


_SEED_LINE = re.compile(r"^\(seed -?\d+(: rerun with JAXLINGS_SEED=-?\d+)?\)$")


def _is_seed_line(line: str) -> bool:
    """The "(seed N: rerun with JAXLINGS_SEED=N)" line, in English or in the language in use."""
    from course.engine.checking import SEED_LINE

    if _SEED_LINE.match(line):
        return True
    pattern = re.escape(_(SEED_LINE)).replace(re.escape("{seed}"), r"-?\d+")
    return re.fullmatch(pattern, line) is not None


def failure_report(result: Any, short: bool = False) -> str:
    """What a failed result says to the learner: every failing check in order (or, short,
    only the first), then the seed to replay the run, once."""
    from course.engine.checking import seed_line

    if short:
        return result.message
    failing = [c for c in result.checks if c.outcome in ("failed", "error")]
    if not failing:  # nothing more to list than the summary
        return result.message
    lines = [_("{headline}: {failed} of {total} checks failed").format(
        headline=result.headline, failed=len(failing), total=len(result.checks))]
    for check in failing:
        body = [ln for ln in check.message.rstrip("\n").splitlines() if not _is_seed_line(ln.strip())]
        lines.append("")
        lines.append(f"✗ {check.name}")
        lines.extend(f"  {ln}" for ln in body)
    lines.append("")
    lines.append(seed_line(result.seed))
    return "\n".join(lines)


_AFTER_PASS = N_("`jaxlings check` moves on to the next exercise.")


def print_result(console: Console, result: Any, short: bool = False, after_pass: str | None = _AFTER_PASS) -> None:
    from rich.panel import Panel
    from rich.text import Text

    from course.shell.terminal import box_lines, safe_text

    style = "green" if result.passed else "red"
    # The message opens with the cause in words; the title says where and which way.
    title = (_("✓ {exercise}: passed") if result.passed else _("✗ {exercise}: not passed yet")).format(
        exercise=result.exercise)
    # Inside the box's borders and padding; wrapped here, so that a continued line keeps its indentation.
    inner = max(console.width - 4, 20)
    # Messages quote the learner's code and exceptions, and output is whatever it printed.
    rows, links = box_lines(safe_text(result.message if result.passed else failure_report(result, short)), inner)
    body = Text("\n".join(rows))
    if not result.passed and result.output.strip():
        printed, more = box_lines(safe_text("\n".join(result.output.strip().splitlines()[-15:])), inner)
        links += more
        body.append("\n\n" + _("Your code printed:") + "\n", style="dim")
        body.append("\n".join(printed), style="dim")
    console.print(Panel(body, title=Text(safe_text(title)), border_style=style, expand=False))
    for number, url in enumerate(links, start=1):
        # Whole, on a line of its own: the terminal may wrap it, but it stays one link.
        console.print(Text(f"[{number}] {url}"), soft_wrap=True)
    if result.passed:
        done = _("[green]Done.[/] `jaxlings solution {exercise}` shows the reference solution.").format(
            exercise=escape(result.exercise))
        console.print(join_sentences(done, _(after_pass) if after_pass else ""))


def cmd_check(args: argparse.Namespace) -> int:
    from course.engine.server import check_exercise

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    if args.name is None:
        from course.progress import Progress

        exercise = Progress.load().next_pending(catalog)
        if exercise is None:
            _console().print(_("[green]Every exercise is done.[/] `jaxlings verify` re-checks them all."))
            return EXIT_OK
    else:
        exercise = _exercise(catalog, args.name)
        if exercise is None:
            return EXIT_USAGE
    from course.workspace import localize_starter

    localize_starter(exercise)  # the first time: the starter in the learner's language (course/workspace.py)
    _isolation_notice()
    try:
        with _checking_line(exercise) as landed:
            result = check_exercise(exercise, seed=args.seed, on_outcome=landed)
    except ValueError as e:  # a bad JAXLINGS_SEED
        _err(str(e))
        return EXIT_USAGE
    _record(result)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print_result(_console(), result, short=args.short)
    return EXIT_OK if result.passed else EXIT_FAIL


def _record(result: Any) -> None:
    from course.progress import Progress

    progress = Progress.load()
    progress.record(result)
    for warning in progress.warnings:
        _err(warning)


# -- list ---------------------------------------------------------------------------


def _list_rows(catalog: Any, progress: Any) -> list[dict[str, Any]]:
    """One row per exercise, with the two numbers the commands accept: `number` (check, hint,
    reset, solution, watch) and `lesson_number` (lesson)."""
    lesson_numbers = {lesson.name: n for n, lesson in enumerate(catalog.lessons, 1)}
    rows = []
    for n, ex in enumerate(catalog.exercises, 1):
        entry = progress.entry(ex.name) or {}
        rows.append({"number": n, "name": ex.name, "lesson": ex.lesson, "lesson_number": lesson_numbers.get(ex.lesson),
                     "done": bool(entry.get("done")), "attempts": int(entry.get("attempts", 0)),
                     "last_cause": entry.get("last_cause")})
    return rows


def cmd_list(args: argparse.Namespace) -> int:
    from course.progress import Progress

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    progress = Progress.load()
    _warn(progress)
    if args.json:
        rows = _list_rows(catalog, progress)
        pending = progress.next_pending(catalog)
        print(json.dumps({"title": catalog.title, "done": sum(r["done"] for r in rows), "total": len(rows),
                          "next": pending.name if pending else None, "exercises": rows}, indent=2))
        return EXIT_OK
    print_list(_console(), catalog, progress)
    return EXIT_OK


def print_list(console: Console, catalog: Any, progress: Any, current: str | None = None) -> None:
    """The course as a table; `current` (in watch) is marked instead of the next pending one."""
    from rich.table import Table

    from course.i18n import content

    rows = _list_rows(catalog, progress)
    done = sum(r["done"] for r in rows)
    pending = progress.next_pending(catalog)
    marked, mark = (current, _("watching")) if current else (pending.name if pending else None, _("next"))
    # The mark goes in the narrow # column: a note after the name wraps at 80 columns.
    numbers = _("`jaxlings check 5` takes a number from the # column, `jaxlings lesson 3` one from the lesson column.")
    caption = (f"→ {mark}: {escape(marked)}\n" if marked else "") + f"[dim]{numbers}[/]"
    table = Table(title=_("{title}: {done}/{total} done").format(title=escape(content(catalog.title)), done=done,
                                                                   total=len(rows)),
                  title_justify="left", caption=caption, caption_justify="left")
    columns = (("#", "#"), ("lesson", _("lesson")), ("exercise", _("exercise")), ("status", _("status")),
               ("attempts", _("attempts")))
    # An exercise's name is what the learner types: it keeps its whole width (measured in
    # cells), and the other columns wrap to make room at 80 columns.
    from rich.cells import cell_len

    widest = max((cell_len(r["name"]) for r in rows), default=0)
    # The lesson's number and name are what `jaxlings lesson` takes: kept whole too.
    widest_lesson = max((cell_len(f"{r['lesson_number']:>2} {r['lesson']}") for r in rows), default=0)
    for col, heading in columns:
        table.add_column(heading, justify="right" if col in ("#", "attempts") else "left",
                         no_wrap=col in ("#", "exercise", "lesson"),
                         min_width={"exercise": widest, "lesson": widest_lesson}.get(col))
    for i, r in enumerate(rows, 1):
        if r["done"]:
            status = "[green]" + _("done") + "[/]"
        elif r["attempts"]:
            cause = escape(str(r["last_cause"])) if r["last_cause"] else ""
            trying = "[yellow]" + _("trying") + "[/]"
            status = f"{trying} ({cause})" if cause else trying
        else:
            status = "[dim]" + _("pending") + "[/]"
        here = r["name"] == marked
        number = f"[bold cyan]→[/] {i}" if here else str(i)
        lesson = f"{r['lesson_number']:>2} {escape(r['lesson'])}" if r["lesson_number"] else escape(r["lesson"])
        table.add_row(number, lesson, escape(r["name"]), status, str(r["attempts"]),
                      style="bold" if here else None)
    console.print(table)


def _warn(progress: Any) -> None:
    for warning in progress.warnings:
        _err(warning)


# -- hint -----------------------------------------------------------------------------


def cmd_hint(args: argparse.Namespace) -> int:
    from course.progress import Progress

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    ex, code = _named_or_current(catalog, args.name, "hint")
    if ex is None:
        return code
    from course.workspace import localize_starter

    localize_starter(ex)  # before the hint gives the exercise an entry, which fixes its starter's language
    progress = Progress.load()
    _warn(progress)
    already = progress.hint_level(ex.name)
    level = progress.reveal_hint(ex.name, available=len(ex.hints)) if ex.hints else 0
    shown = list(ex.hints[:level])
    if args.json:
        print(json.dumps({"exercise": ex.name, "hints": shown, "remaining": len(ex.hints) - level}, indent=2))
        return EXIT_OK
    console = _console()
    if not ex.hints:
        console.print(_("{exercise} has no hints yet.").format(exercise=escape(ex.name)))
        return EXIT_OK
    from course.i18n import content

    for i, hint in enumerate(map(content, shown), 1):
        console.print(_("[bold]Hint {n}/{total}:[/] {hint}").format(n=i, total=len(ex.hints), hint=escape(hint)),
                      style=None if i == level else "dim")
    if already >= len(ex.hints):
        console.print("[dim]" + _("That was the last hint. After a pass, `jaxlings solution` shows the reference.")
                      + "[/]")
    return EXIT_OK


# -- reset ----------------------------------------------------------------------------


def cmd_reset(args: argparse.Namespace) -> int:
    from course.workspace import reset_exercise

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    ex, code = _named_or_current(catalog, args.name, "reset")
    if ex is None:
        return code
    target = ex.exercise_path()
    if args.name is None:
        # Named by nobody: say which one before asking (or before --yes acts).
        _console().print(_("The current exercise is [bold]{exercise}[/].").format(exercise=escape(ex.name)))
    if not args.yes:
        try:
            from course.shell.terminal import wrapped_prompt

            answer = input(wrapped_prompt(_("Replace {target} with the original starter? "
                                            "Your code is kept in .jaxlings/backups/. [y/N] ").format(target=target),
                                          _console()))
        except EOFError:  # no one to answer (stdin closed): the safe answer is no
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print(_("Nothing changed."))
            return EXIT_FAIL
    try:
        outcome = reset_exercise(ex)
    except (ResetError, OSError) as e:
        _err(str(e))
        return EXIT_FAIL
    console = _console()
    console.print(_("Restored the starter of [bold]{exercise}[/] in {path}; it is pending again.").format(
        exercise=escape(ex.name), path=escape(str(target))))
    if outcome.backup is not None:
        console.print(_("Your code was saved to {path}.").format(path=escape(str(outcome.backup))))
    return EXIT_OK


# -- solution -------------------------------------------------------------------------


def cmd_solution(args: argparse.Namespace) -> int:
    from course.progress import Progress

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    ex = _exercise(catalog, args.name)
    if ex is None:
        return EXIT_USAGE
    if not Progress.load().is_done(ex.name):
        _err(_("the solution of {exercise} opens after your code passes: `jaxlings check {exercise}`.").format(
            exercise=ex.name))
        return EXIT_FAIL
    try:
        solution = ex.solution_path().read_text(encoding="utf-8")
    except OSError as e:
        _err(_("cannot read the solution: {error}").format(error=e))
        return EXIT_FAIL
    from course.shell.terminal import safe_text
    from course.workspace import NotUtf8Error, read_source

    mine_path = ex.exercise_path()
    try:
        mine = read_source(mine_path, f"exercises/{ex.file}") if mine_path.is_file() else ""
    except (NotUtf8Error, OSError) as e:  # still show the reference; say why yours is missing
        _err(str(e))
        mine = None
    if args.json:
        print(json.dumps({"exercise": ex.name, "solution": solution, "yours": mine}, indent=2))
        return EXIT_OK
    from rich.columns import Columns
    from rich.panel import Panel
    from rich.syntax import Syntax

    console = _console()
    panels = [Panel(Syntax(solution, "python", line_numbers=True, word_wrap=True), title=_("reference solution"))]
    if mine is not None:
        panels.insert(0, Panel(Syntax(safe_text(mine), "python", line_numbers=True, word_wrap=True), title=_("yours")))
    if console.width >= 120:
        console.print(Columns(panels, equal=True, expand=True))
    else:
        for panel in panels:
            console.print(panel)
    return EXIT_OK


# -- verify ---------------------------------------------------------------------------


def cmd_verify(args: argparse.Namespace) -> int:
    from rich.table import Table

    from course.progress import Progress
    from course.engine.runner import CheckSession, workspace_compile_cache

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    from course.shell.terminal import can_redraw

    console = _console()
    live_line = can_redraw(Console(stderr=True))
    progress = Progress.load()
    results = []
    _isolation_notice()
    try:
        with CheckSession(compile_cache=workspace_compile_cache()) as session:
            total = len(catalog.exercises)
            for i, ex in enumerate(catalog.exercises, 1):
                if not args.json and not live_line:
                    console.print(_("checking {exercise} ({n}/{total}) ...").format(
                        exercise=escape(ex.name), n=i, total=total), style="dim")
                with _checking_line(ex, f"{ex.name} ({i}/{total})"):
                    result = session.run(ex, seed=args.seed)
                progress.record(result)
                results.append(result)
    except ValueError as e:
        _err(str(e))
        return EXIT_USAGE
    _warn(progress)
    passed = sum(r.passed for r in results)
    complete = passed == len(results) and results
    if args.json:
        print(json.dumps({"complete": bool(complete), "passed": passed, "total": len(results),
                          "results": [r.to_dict() for r in results]}, indent=2))
    else:
        table = Table(title=_("{passed}/{total} exercises pass").format(passed=passed, total=len(results)),
                      title_justify="left")
        for col in (_("exercise"), _("result"), _("cause")):
            table.add_column(col)
        for r in results:
            table.add_row(escape(r.exercise), "[green]" + _("pass") + "[/]" if r.passed else "[red]" + _("fail") + "[/]",
                          r.cause or "")
        console.print(table)
        if complete:
            console.print(_("[bold green]Course complete![/] Every exercise passes. Well done."))
    return EXIT_OK if complete else EXIT_FAIL


# -- doctor ---------------------------------------------------------------------------


def cmd_doctor(args: argparse.Namespace) -> int:
    from importlib import metadata

    from course.catalog import manifest_path, validate
    from course.i18n import content

    problems = validate()
    versions = {}
    for dist in ("jax", "jaxlib", "flax", "optax", "orbax-checkpoint", "numpy", "torch", "textual", "pytest"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    versions["python"] = sys.version.split()[0]
    devices = _devices()
    from course.editor import describe_editor

    editor = describe_editor()
    translations = _doctor_translations()
    report = {"course": _doctor_course(), "manifest": str(manifest_path()), "problems": problems,
              "versions": versions, "devices": devices, "editor": editor, "isolation": _doctor_isolation(args),
              "translations": translations}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        console = _console()
        course = report["course"]
        console.print(_("[bold]Course[/] {title} ({root})").format(
            title=escape(content(course["title"]) if course["title"] else _("untitled")), root=escape(course["root"])))
        console.print("  " + _("workspace {workspace}; progress and settings in {state}").format(
            workspace=escape(course["workspace"]), state=escape(course["state"])))
        console.print(_("[bold]Manifest[/] {path}").format(path=escape(report["manifest"])))
        if problems:
            console.print("[red]" + ngettext("{n} problem:", "{n} problems:", len(problems)).format(n=len(problems))
                          + "[/]")
            for p in problems:
                console.print(f"  - {p}", markup=False)
        else:
            console.print("[green]" + _("no problems") + "[/]")
        console.print("[bold]" + _("Versions") + "[/] "
                      + ", ".join(f"{k} {v or _('missing')}" for k, v in versions.items()))
        console.print("[bold]" + _("Devices") + "[/] " + escape(", ".join(devices)))
        _print_editor(console, editor)
        _print_translations(console, translations)
        for key, lines in report["isolation"].items():
            console.print("[bold]" + _("Isolation ({command})").format(command=key) + "[/]")
            for line in lines:
                console.print(f"  {line}", markup=False)
    return EXIT_USAGE if problems else EXIT_OK


def _doctor_course() -> dict[str, Any]:
    """Which course is in use, where its learner's files and state are (paths.state_dir)."""
    from course import paths
    from course.catalog import load_catalog

    catalog = load_catalog(strict=False)
    return {"title": catalog.title, "language": catalog.language, "root": str(catalog.root),
            "workspace": str(paths.workspace()), "state": str(paths.state_dir(claim=False))}


def _doctor_translations() -> dict[str, dict[str, Any]]:
    """The state of every edition other than English (course.i18n.state)."""
    from course.catalog import ManifestError, load_catalog
    from course.i18n.state import report

    try:
        catalog = load_catalog()
    except ManifestError:  # already among the problems; the catalogs can still be looked at
        catalog = None
    from types import SimpleNamespace

    return report(catalog if catalog is not None else SimpleNamespace(lessons=[], root=None))


def _print_translations(console: Console, states: dict[str, dict[str, Any]]) -> None:
    from course.i18n import LANGUAGES
    from course.i18n.state import warnings

    console.print("[bold]" + _("Translations") + "[/] " + ", ".join(LANGUAGES[lang] for lang in states))
    found = warnings(states)
    for warning in found:
        console.print(f"  [yellow]{escape(warning)}[/]")
    if not found:
        console.print("  [green]" + _("every message and lesson is translated") + "[/]")


def _print_editor(console: Console, editor: dict) -> None:
    def shown(var: str) -> str:
        value = editor[var]
        return f"${var}={value!r}" if value else _("${var} not set").format(var=var)

    found = _("; found at {path}").format(path=editor["found"]) if editor["found"] else ""
    console.print("[bold]" + _("Editor") + f"[/] {escape(shown('VISUAL'))}, {escape(shown('EDITOR'))}{escape(found)}")
    if editor["problem"]:
        console.print(f"  [yellow]{escape(editor['problem'])}[/]")
    console.print("  " + _("Ctrl+O in the app {what}.").format(what=escape(editor["ctrl_o"])))


# -- isolation (course.engine.isolation) ----------------------------------------------


def _isolation_notice() -> None:
    """Where checks cannot be sandboxed, say so in one line (stderr: --json stays clean)."""
    from course.engine.isolation import for_checks

    iso = for_checks()
    if not iso.sandboxed:
        print(iso.notice(), file=sys.stderr)


def _doctor_isolation(args: argparse.Namespace) -> dict[str, list[str]]:
    from course.engine.isolation import IsolationError

    out = {"check": _isolation_lines()}
    if getattr(args, "grading", False):
        try:
            out["grade"] = _isolation_lines(grading=True)
        except IsolationError as e:
            out["grade"] = [str(e)]
    return out


def _isolation_lines(grading: bool = False) -> list[str]:
    """What is in force, and what stronger isolation would take: only what the reader can do."""
    import shutil

    from course.engine.isolation import INSTALL_HINT, REASONS, choose, for_checks, reason_text

    iso = choose("auto", grading=grading) if grading else for_checks()
    lines = [iso.notice()]
    if iso.tier != "bubblewrap":
        why = next((t.split(": ", 1)[1] for t in iso.tried if t.startswith("bubblewrap: ")), None)
        if shutil.which("bwrap") is None:
            lines.append(_("bubblewrap: not installed; to use it, {hint}.").format(hint=_(INSTALL_HINT)))
        elif os.geteuid() == 0:
            # Installed and passed over on purpose: installing it again changes nothing.
            lines.append(_("bubblewrap: installed, not used: {why}.").format(why=reason_text(REASONS[2])) + " " + (
                _("The unshare tier in force sandboxes graded code as well.") if iso.tier == "unshare" else
                _("To use it, run as a user who is not root; as root, the unshare tier needs user namespaces.")))
        elif why:
            lines.append(_("bubblewrap: installed, but {why}.").format(why=reason_text(why)))
        else:
            lines.append(_("bubblewrap: installed, not tried: isolation {tier} was asked for.").format(tier=iso.tier))
    if not iso.sandboxed:
        lines.append(_("User namespaces are off here: enable them (sysctl kernel.unprivileged_userns_clone=1, "
                       "user.max_user_namespaces > 0), or in a container allow unshare(CLONE_NEWUSER)."))
    return lines


def _devices() -> list[str]:
    try:
        import jax

        return [f"{d.platform}:{d.id} ({d.device_kind})" for d in jax.devices()]
    except Exception as e:  # noqa: BLE001 - doctor reports a broken install instead of crashing
        return [f"unavailable: {e}"]


# -- lesson ---------------------------------------------------------------------------


def cmd_lesson(args: argparse.Namespace) -> int:
    from course.lessons import load_lesson

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    from course.shell.lookup import NotFound, find_lesson

    try:
        lesson = find_lesson(catalog, args.name)
    except NotFound as e:
        _err(str(e))
        return EXIT_USAGE
    try:
        text = load_lesson(lesson.lesson_path())
    except OSError as e:
        _err(_("cannot read the lesson: {error}").format(error=e))
        return EXIT_FAIL
    console = _console()
    with _paged(console, enabled=not args.no_pager):
        _print_lesson(console, text)
    return EXIT_OK


def _print_lesson(console: Console, text: Any) -> None:
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.table import Table

    from course.lessons import CodeBlock, Prose, SideBySide
    from course.shell.terminal import lesson_markdown

    def code_panel(block: CodeBlock, title: str) -> Panel:
        language = block.language or "text"
        return Panel(Syntax(block.code.rstrip("\n"), language, word_wrap=True), title=title, title_align="left")

    for seg in text.segments:
        if isinstance(seg, Prose):
            console.print(lesson_markdown(seg.text))
        elif isinstance(seg, SideBySide):
            grid = Table.grid(expand=True, padding=(0, 1))
            grid.add_column(ratio=1)
            grid.add_column(ratio=1)
            if console.width >= 100:
                grid.add_row(code_panel(seg.torch, "PyTorch"), code_panel(seg.jax, "JAX"))
                console.print(grid)
            else:
                console.print(code_panel(seg.torch, "PyTorch"))
                console.print(code_panel(seg.jax, "JAX"))
        elif isinstance(seg, CodeBlock):
            title = {"torch": "PyTorch", "jax": "JAX"}.get(seg.framework, "")
            if seg.raises:
                title = (title + " " if title else "") + _("raises {exception}").format(exception=seg.raises)
            console.print(code_panel(seg, title))


class _CommandPager:
    """$PAGER (default `less`), run the way git runs it: through the shell, with
    LESS=FRX unless the learner set LESS (colours pass through; a short text
    prints and exits; the screen is not cleared on the way out)."""

    def show(self, content: str) -> None:
        command = os.environ.get("PAGER", "").strip() or "less"
        env = {**os.environ}
        env.setdefault("LESS", "FRX")
        try:
            proc = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
        except OSError:
            proc = None
        if proc is not None:
            try:
                with proc.stdin:
                    proc.stdin.write(content.encode("utf-8", errors="replace"))
            except BrokenPipeError:  # the learner quit the pager before the end: fine
                pass
            if proc.wait() != 127:  # 127: the shell did not find the pager
                return
        sys.stdout.write(content)


def _paged(console: Console, enabled: bool):
    """Page only a real terminal: never a pipe, a file, or a dumb terminal."""
    import contextlib

    if not enabled or not sys.stdout.isatty() or not console.is_terminal or console.is_dumb_terminal:
        return contextlib.nullcontext()
    return console.pager(_CommandPager(), styles=True)


def _checking_line(exercise: Any, label: str | None = None):
    """The live "checking NAME… 4 s (your code may run 30 s)" line on stderr (nothing when stderr is not a terminal)."""
    from course.shell.terminal import budget_of, elapsed_line

    return elapsed_line(label or exercise.name, budget_of(exercise))

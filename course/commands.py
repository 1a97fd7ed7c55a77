"""The course's terminal commands: list, check, watch, hint, reset, solution, verify, doctor, lesson.

Wired by `course/cli.py`. Exit codes scripts can trust: 0 pass/ok, 1 fail,
2 usage or manifest error. Read commands take `--json`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from typing import Any

from rich.console import Console
from rich.markup import escape

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    needs_name = {"hint", "reset", "solution", "lesson"}
    if name in needs_name:
        parser.add_argument("name", help="exercise name" if name != "lesson" else "lesson name (or an exercise's)")
    elif name in ("check", "watch"):
        parser.add_argument("name", nargs="?", help="exercise name (default: the next pending one)")
    if name in ("check", "verify"):
        parser.add_argument("--seed", type=int, help="seed for the checks' random inputs (default: a fresh one)")
    if name == "watch":
        parser.add_argument("--poll", action="store_true",
                            help="poll the file for changes (for WSL, network drives, containers)")
    if name == "reset":
        parser.add_argument("--yes", "-y", action="store_true", help="don't ask before overwriting your file")
    if name in ("list", "check", "hint", "solution", "verify", "doctor"):
        parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    if name == "doctor":
        parser.add_argument("--grading", action="store_true",
                            help="also say which isolation `jaxlings grade` would use here")


def run(args: argparse.Namespace) -> int:
    handler = globals().get(f"cmd_{args.command}")
    if handler is None:
        print(f"jaxlings: unknown command {args.command!r}", file=sys.stderr)
        return EXIT_USAGE
    return handler(args)


def _console() -> Console:
    return Console(highlight=False)


def _err(message: str) -> None:
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[bold red]error:[/] {escape(message)}")


def _catalog():
    from course.catalog import ManifestError, load_catalog

    try:
        return load_catalog()
    except ManifestError as e:
        _err(f"the course manifest is broken; run `jaxlings doctor`.\n{e}")
        return None


def _exercise(catalog, name: str):
    try:
        return catalog.exercise(name)
    except KeyError as e:
        _err(e.args[0])
        return None


def print_result(console: Console, result: Any) -> None:
    from rich.panel import Panel
    from rich.text import Text

    style = "green" if result.passed else "red"
    # The message opens with the cause in words; the title says where and which way.
    title = f"✓ {result.exercise}: passed" if result.passed else f"✗ {result.exercise}: not passed yet"
    body = Text(result.message)
    if not result.passed and result.output.strip():
        body.append("\n\nYour code printed:\n", style="dim")
        body.append("\n".join(result.output.strip().splitlines()[-15:]), style="dim")
    console.print(Panel(body, title=title, border_style=style, expand=False))
    if result.passed:
        console.print(f"[green]Done.[/] `jaxlings solution {result.exercise}` shows the reference solution; "
                      "`jaxlings check` moves on to the next exercise.")


def cmd_check(args: argparse.Namespace) -> int:
    from course.engine.runner import run_exercise

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    if args.name is None:
        from course.progress import Progress

        exercise = Progress.load().next_pending(catalog)
        if exercise is None:
            _console().print("[green]Every exercise is done.[/] `jaxlings verify` re-checks them all.")
            return EXIT_OK
    else:
        exercise = _exercise(catalog, args.name)
        if exercise is None:
            return EXIT_USAGE
    _isolation_notice()
    try:
        result = run_exercise(exercise, seed=args.seed)
    except ValueError as e:  # a bad JAXLINGS_SEED
        _err(str(e))
        return EXIT_USAGE
    _record(result)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print_result(_console(), result)
    return EXIT_OK if result.passed else EXIT_FAIL


def _record(result: Any) -> None:
    from course.progress import Progress

    progress = Progress.load()
    progress.record(result)
    for warning in progress.warnings:
        _err(warning)


# -- list ---------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    from rich.table import Table

    from course.progress import Progress

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    progress = Progress.load()
    _warn(progress)
    rows = []
    for ex in catalog.exercises:
        entry = progress.entry(ex.name) or {}
        rows.append({"name": ex.name, "lesson": ex.lesson, "done": bool(entry.get("done")),
                     "attempts": int(entry.get("attempts", 0)), "last_cause": entry.get("last_cause")})
    done = sum(r["done"] for r in rows)
    pending = progress.next_pending(catalog)
    if args.json:
        print(json.dumps({"title": catalog.title, "done": done, "total": len(rows),
                          "next": pending.name if pending else None, "exercises": rows}, indent=2))
        return EXIT_OK
    table = Table(title=f"{catalog.title}: {done}/{len(rows)} done", title_justify="left")
    for col in ("#", "lesson", "exercise", "status", "attempts"):
        table.add_column(col, justify="right" if col in ("#", "attempts") else "left")
    for i, r in enumerate(rows, 1):
        if r["done"]:
            status = "[green]done[/]"
        elif r["attempts"]:
            status = f"[yellow]trying[/] ({r['last_cause']})" if r["last_cause"] else "[yellow]trying[/]"
        else:
            status = "[dim]pending[/]"
        marker = " [bold cyan]<- next[/]" if pending is not None and r["name"] == pending.name else ""
        table.add_row(str(i), r["lesson"], r["name"] + marker, status, str(r["attempts"]))
    _console().print(table)
    return EXIT_OK


def _warn(progress: Any) -> None:
    for warning in progress.warnings:
        _err(warning)


# -- hint -----------------------------------------------------------------------------


def cmd_hint(args: argparse.Namespace) -> int:
    from course.progress import Progress

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    ex = _exercise(catalog, args.name)
    if ex is None:
        return EXIT_USAGE
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
        console.print(f"{ex.name} has no hints yet.")
        return EXIT_OK
    for i, hint in enumerate(shown, 1):
        console.print(f"[bold]Hint {i}/{len(ex.hints)}:[/] {escape(hint)}", style=None if i == level else "dim")
    if already >= len(ex.hints):
        console.print("[dim]That was the last hint. After a pass, `jaxlings solution` shows the reference.[/]")
    return EXIT_OK


# -- reset ----------------------------------------------------------------------------


class ResetError(Exception):
    """The starter file cannot be restored; the message says why and what to do."""


def pristine_starter(exercise: Any) -> str:
    """The starter file as shipped with the course.

    When the workspace is separate from the course (JAXLINGS_WORKSPACE), the
    course's own exercises/ is pristine. When the learner edits the course
    checkout itself, the pristine copy is the committed one: `git show HEAD:...`.
    """
    from course import paths
    from course.catalog import default_workspace

    root = (exercise.root or paths.course_root()).resolve()
    relative = f"exercises/{exercise.file}"
    if default_workspace(exercise.root).resolve() != root:
        source = root / relative
        if source.is_file():
            return source.read_text(encoding="utf-8")
        raise ResetError(f"the course at {root} has no {relative} to restore from.")
    try:
        proc = subprocess.run(["git", "-C", str(root), "show", f"HEAD:./{relative}"],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ResetError(f"cannot run git to find the original {relative} ({e}). "
                         "Restore it from a fresh copy of the course.") from None
    if proc.returncode != 0:
        reason = proc.stderr.decode(errors="replace").strip().splitlines()
        raise ResetError(
            f"cannot find the original {relative}: the course folder {root} is not a git checkout "
            f"with that file committed ({reason[-1] if reason else 'git failed'}). "
            "Restore it from a fresh copy of the course."
        )
    return proc.stdout.decode("utf-8")


def restore_starter(exercise: Any) -> None:
    """Overwrite the learner's file with the pristine starter (atomically). Raises ResetError."""
    text = pristine_starter(exercise)
    target = exercise.exercise_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.jaxlings-reset")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, target)


def cmd_reset(args: argparse.Namespace) -> int:
    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    ex = _exercise(catalog, args.name)
    if ex is None:
        return EXIT_USAGE
    target = ex.exercise_path()
    if not args.yes:
        try:
            answer = input(f"Overwrite {target} with the original starter? Your changes will be lost. [y/N] ")
        except EOFError:  # no one to answer (stdin closed): the safe answer is no
            answer = ""
        if answer.strip().lower() not in ("y", "yes"):
            print("Nothing changed.")
            return EXIT_FAIL
    try:
        restore_starter(ex)
    except (ResetError, OSError) as e:
        _err(str(e))
        return EXIT_FAIL
    _console().print(f"Restored the starter of [bold]{ex.name}[/] in {target}.")
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
        _err(f"the solution of {ex.name} opens after your code passes: `jaxlings check {ex.name}`.")
        return EXIT_FAIL
    try:
        solution = ex.solution_path().read_text(encoding="utf-8")
    except OSError as e:
        _err(f"cannot read the solution: {e}")
        return EXIT_FAIL
    mine_path = ex.exercise_path()
    mine = mine_path.read_text(encoding="utf-8") if mine_path.is_file() else ""
    if args.json:
        print(json.dumps({"exercise": ex.name, "solution": solution, "yours": mine}, indent=2))
        return EXIT_OK
    from rich.columns import Columns
    from rich.panel import Panel
    from rich.syntax import Syntax

    console = _console()
    panels = [
        Panel(Syntax(mine, "python", line_numbers=True, word_wrap=True), title="yours"),
        Panel(Syntax(solution, "python", line_numbers=True, word_wrap=True), title="reference solution"),
    ]
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
    from course.engine.runner import CheckSession

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    console = _console()
    progress = Progress.load()
    results = []
    _isolation_notice()
    try:
        with CheckSession() as session:
            for ex in catalog.exercises:
                if not args.json:
                    console.print(f"checking {ex.name} ...", style="dim")
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
        table = Table(title=f"{passed}/{len(results)} exercises pass", title_justify="left")
        for col in ("exercise", "result", "cause"):
            table.add_column(col)
        for r in results:
            table.add_row(r.exercise, "[green]pass[/]" if r.passed else "[red]fail[/]", r.cause or "")
        console.print(table)
        if complete:
            console.print("[bold green]Course complete![/] Every exercise passes. Well done.")
    return EXIT_OK if complete else EXIT_FAIL


# -- doctor ---------------------------------------------------------------------------


def cmd_doctor(args: argparse.Namespace) -> int:
    from importlib import metadata

    from course.catalog import manifest_path, validate

    problems = validate()
    versions = {}
    for dist in ("jax", "jaxlib", "flax", "optax", "orbax-checkpoint", "numpy", "torch", "textual", "pytest"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    versions["python"] = sys.version.split()[0]
    devices = _devices()
    report = {"manifest": str(manifest_path()), "problems": problems, "versions": versions, "devices": devices,
              "isolation": _doctor_isolation(args)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        console = _console()
        console.print(f"[bold]Manifest[/] {report['manifest']}")
        if problems:
            console.print(f"[red]{len(problems)} problem(s):[/]")
            for p in problems:
                console.print(f"  - {p}", markup=False)
        else:
            console.print("[green]no problems[/]")
        console.print("[bold]Versions[/] " + ", ".join(f"{k} {v or 'missing'}" for k, v in versions.items()))
        console.print("[bold]Devices[/] " + ", ".join(devices))
        for key, lines in report["isolation"].items():
            console.print(f"[bold]Isolation ({key})[/]")
            for line in lines:
                console.print(f"  {line}", markup=False)
    return EXIT_USAGE if problems else EXIT_OK


# -- isolation (course.engine.isolation) ----------------------------------------------


def _isolation_notice() -> None:
    """Where checks cannot be sandboxed, say so in one line (stderr: --json stays clean)."""
    from course.engine.isolation import for_checks

    iso = for_checks()
    if not iso.sandboxed:
        print(iso.notice(), file=sys.stderr)


def _doctor_isolation(args: argparse.Namespace) -> dict[str, list[str]]:
    from course.engine.isolation import IsolationError, doctor_lines

    out = {"check": doctor_lines()}
    if getattr(args, "grading", False):
        try:
            out["grade"] = doctor_lines(grading=True)
        except IsolationError as e:
            out["grade"] = [str(e)]
    return out


def _devices() -> list[str]:
    try:
        import jax

        return [f"{d.platform}:{d.id} ({d.device_kind})" for d in jax.devices()]
    except Exception as e:  # noqa: BLE001 - doctor reports a broken install instead of crashing
        return [f"unavailable: {e}"]


# -- lesson ---------------------------------------------------------------------------


def cmd_lesson(args: argparse.Namespace) -> int:
    from rich.markdown import Markdown
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.table import Table

    from course.lessons import CodeBlock, Prose, SideBySide, load_lesson

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    try:
        lesson = catalog.lesson(args.name)
    except KeyError:
        try:
            lesson = catalog.lesson_of(args.name)
        except KeyError as e:
            _err(e.args[0].replace("exercise", "lesson or exercise", 1))
            return EXIT_USAGE
    try:
        text = load_lesson(lesson.lesson_path())
    except OSError as e:
        _err(f"cannot read the lesson: {e}")
        return EXIT_FAIL
    console = _console()

    def code_panel(block: CodeBlock, title: str) -> Panel:
        language = block.language or "text"
        return Panel(Syntax(block.code.rstrip("\n"), language, word_wrap=True), title=title, title_align="left")

    for seg in text.segments:
        if isinstance(seg, Prose):
            console.print(Markdown(seg.text))
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
                title = (title + " " if title else "") + f"raises {seg.raises}"
            console.print(code_panel(seg, title))
    return EXIT_OK


# -- watch ----------------------------------------------------------------------------


def cmd_watch(args: argparse.Namespace) -> int:
    from course.progress import Progress
    from course.engine.runner import CheckSession

    catalog = _catalog()
    if catalog is None:
        return EXIT_USAGE
    if args.name:
        ex = _exercise(catalog, args.name)
        if ex is None:
            return EXIT_USAGE
    else:
        ex = Progress.load().next_pending(catalog)
        if ex is None:
            _console().print("[green]Every exercise is done.[/] `jaxlings verify` re-checks them all.")
            return EXIT_OK
    console = _console()
    path = ex.exercise_path()
    _isolation_notice()
    with CheckSession() as session:
        while True:
            console.rule(f"{ex.name}  ({path})")
            result = session.run(ex)
            _record(result)
            print_result(console, result)
            how = "polling every second" if args.poll else "on save"
            console.print(f"[dim]Watching {path} ({how}). Ctrl-C to stop. "
                          "If saving does not re-check (WSL, network drives), use `jaxlings watch --poll`.[/]")
            _wait_for_change(path, poll=args.poll, console=console)  # Ctrl-C ends the loop


def _signature(path: Any) -> tuple[int, int] | None:
    try:
        st = path.stat()
        return (st.st_mtime_ns, st.st_size)
    except OSError:
        return None


def _wait_for_change(path: Any, *, poll: bool, console: Console) -> bool:
    """Block until `path` changes (returns True). Editors often save by rename, so watch the folder."""
    import time

    before = _signature(path)
    if not poll:
        try:
            import watchfiles

            for changes in watchfiles.watch(path.parent, debounce=200, raise_interrupt=True):
                if any(os.path.abspath(p) == str(path) for _, p in changes) and _signature(path) is not None:
                    return True
        except KeyboardInterrupt:
            raise
        except Exception as e:  # noqa: BLE001 - e.g. inotify limits: fall back rather than stop
            console.print(f"[yellow]File events are not available here ({e}); polling instead.[/]")
    while True:
        time.sleep(1.0)
        now = _signature(path)
        if now is not None and now != before:
            return True

"""The course's terminal commands: list, check, watch, hint, reset, solution, verify, doctor, lesson.

Wired by `course/cli.py`. Exit codes scripts can trust: 0 pass/ok, 1 fail,
2 usage or manifest error. Read commands take `--json`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def add_arguments(parser: argparse.ArgumentParser, name: str) -> None:
    if name == "check":
        parser.add_argument("name", nargs="?", help="exercise name (default: the next pending one)")
        parser.add_argument("--seed", type=int, help="seed for the check's random inputs")
        parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    handler = globals().get(f"cmd_{args.command}")
    if handler is None:
        print(f"jaxlings: unknown command {args.command!r}", file=sys.stderr)
        return EXIT_USAGE
    return handler(args)


def _console() -> Console:
    return Console(highlight=False)


def _err(message: str) -> None:
    Console(stderr=True, highlight=False).print(f"[bold red]error:[/] {message}", markup=True)


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
    title = f"{result.exercise}: {result.headline}"
    body = Text(result.message)
    if not result.passed and result.output.strip():
        body.append("\n\nYour code printed:\n", style="dim")
        body.append("\n".join(result.output.strip().splitlines()[-15:]), style="dim")
    console.print(Panel(body, title=title, border_style=style, expand=False))
    if result.passed:
        console.print(f"[green]Done.[/] `jaxlings solution {result.exercise}` shows the reference solution; "
                      "`jaxlings check` moves on to the next exercise.")


def cmd_check(args: argparse.Namespace) -> int:
    from course.runner import run_exercise

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

"""`jaxlings dev`: the authoring kit's commands.

    jaxlings dev new DIR [--title TITLE]                 a new course, ready to run and to check
    jaxlings dev new-exercise NAME [--lesson LESSON]     one more exercise in the course
    jaxlings dev check [DIR] [--seeds N] [--exercise NAME]...

`new-exercise` works on the course `--course` (or JAXLINGS_COURSE_ROOT) names, else the current
folder; `check` on DIR, else the same. Exit status: 0 when all is well, 1 when `check` found
problems, 2 for bad input.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from pathlib import Path

from course.i18n import _


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from course.shell.terminal import CellWidthHelpFormatter

    sub = parser.add_subparsers(dest="dev_command", metavar="SUBCOMMAND")
    sub.required = True
    new = sub.add_parser("new", help=_("write a new course: a manifest, a lesson, an exercise, its check, "
                                       "an alternative and attacks"),
                         formatter_class=CellWidthHelpFormatter)
    new.add_argument("dir", type=Path, metavar="DIR", help=_("the new course's folder (absent or empty)"))
    new.add_argument("--title", default=None, help=_("the course's title (default: the folder's name)"))

    exercise = sub.add_parser("new-exercise", help=_("add an exercise, with its starter, solution, check and "
                                                     "an attack, to the course"),
                              formatter_class=CellWidthHelpFormatter)
    exercise.add_argument("name", metavar="NAME", help=_("the exercise's name, a Python identifier"))
    exercise.add_argument("--lesson", default=None,
                          help=_("the lesson to add it to (a new lesson if the course has none of that name; "
                                 "default: the last lesson)"))

    check = sub.add_parser("check", help=_("verify a course: starters fail, solutions and alternatives pass, "
                                           "attacks fail, evidence is declared, lessons run"),
                           formatter_class=CellWidthHelpFormatter)
    check.add_argument("dir", type=Path, nargs="?", default=None, metavar="DIR",
                       help=_("the course's folder (default: --course, else the current folder)"))
    check.add_argument("--seeds", type=int, default=3, metavar="N",
                       help=_("how many seeds each solution and alternative is checked with (default: 3)"))
    check.add_argument("--seed", type=int, default=None, metavar="S",
                       help=_("draw the seeds from S, to repeat a run (default: a fresh draw, printed)"))
    check.add_argument("--exercise", action="append", default=[], metavar="NAME",
                       help=_("check only this exercise (repeatable)"))
    check.add_argument("--no-lessons", action="store_true", help=_("do not run the lessons' code"))


def _selected_course() -> Path:
    """The course `--course` / JAXLINGS_COURSE_ROOT names, else the current folder."""
    env = os.environ.get("JAXLINGS_COURSE_ROOT")
    return Path(env).resolve() if env else Path.cwd().resolve()


def run(args: argparse.Namespace) -> int:
    from course.catalog import ManifestError
    from course.devkit.scaffold import ScaffoldError

    try:
        if args.dev_command == "new":
            return _new(args)
        if args.dev_command == "new-exercise":
            return _new_exercise(args)
        return _check(args)
    except (ScaffoldError, ManifestError) as e:
        print(_("jaxlings dev: {error}").format(error=e), file=sys.stderr)
        return 2
    except OSError as e:
        print(_("jaxlings dev: {error}").format(error=e), file=sys.stderr)
        return 2


def _new(args: argparse.Namespace) -> int:
    from course.devkit.scaffold import new_course

    dest = args.dir.resolve()
    written = new_course(dest, args.title or dest.name)
    print(_("Wrote a new course in {dir} ({n} files).").format(dir=dest, n=len(written)))
    print(_("Next: `jaxlings --course {dir}` to take it, `jaxlings dev check {dir}` to verify it, "
            "and docs/authoring.md to write your own exercises.").format(dir=dest))
    return 0


def _new_exercise(args: argparse.Namespace) -> int:
    from course.devkit.scaffold import new_exercise

    root = _selected_course()
    written = new_exercise(root, args.name, args.lesson)
    print(_("Added exercise {name} to {dir}:").format(name=args.name, dir=root))
    for path in written:
        print(f"  {path.relative_to(root)}")
    print(_("Fill in every `TODO (author)`, then run `jaxlings dev check {dir}`.").format(dir=root))
    return 0


def _check(args: argparse.Namespace) -> int:
    from course import paths
    from course.catalog import manifest_path
    from course.devkit.verify import verify

    root = (args.dir.resolve() if args.dir is not None else _selected_course())
    if not manifest_path(root).is_file():
        print(_("jaxlings dev: {dir} is not a course: it has no lessons/course.toml (`jaxlings dev new DIR` "
                "writes one).").format(dir=root), file=sys.stderr)
        return 2
    if root == paths.PACKAGE_DIR.parent:
        print(_("jaxlings dev: this is jaxlings' own course, which its test suite verifies (`make test`)."),
              file=sys.stderr)
        return 2
    if args.seeds < 1:
        print(_("jaxlings dev: --seeds must be 1 or more."), file=sys.stderr)
        return 2
    base = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    draw = random.Random(base)
    seeds = [draw.randrange(2**31) for _ in range(args.seeds)]
    print(_("Checking the course in {dir} with seeds {seeds} (repeat with --seed {base}).").format(
        dir=root, seeds=", ".join(map(str, seeds)), base=base), flush=True)
    quiet = not sys.stderr.isatty()

    def say(line: str) -> None:
        if not quiet:
            print(f"\r\033[K  {line}"[:200], end="", file=sys.stderr, flush=True)

    problems = verify(root, seeds=seeds, exercises=args.exercise or None, lessons=not args.no_lessons, say=say)
    if not quiet:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    for problem in problems:
        print(problem)
    if problems:
        print(_("{n} problem(s).").format(n=len(problems)))
        return 1
    print(_("No problems: the course is ready."))
    return 0

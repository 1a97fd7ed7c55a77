"""The `jaxlings` command: one entry point, sub-commands implemented in core modules.

Each sub-command lives in its own module exposing `add_arguments(parser)` and
`run(args) -> int`; this file only wires them up, importing a module when its
command is used so that `jaxlings --help` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

from course.i18n import LANGUAGES, N_, _, linebreak, normalize, resolve_language, set_language

# name -> (module, one-line help). Order is the order shown in --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "list": ("course.shell.commands", N_("show lessons, exercises and your progress")),
    "check": ("course.shell.commands", N_("check an exercise (default: the next pending one)")),
    "watch": ("course.shell.watching", N_("re-check the current exercise every time you save it")),
    "hint": ("course.shell.commands", N_("show the next hint for an exercise")),
    "reset": ("course.shell.commands", N_("restore an exercise's starter file (your code is kept in .jaxlings/backups/)")),
    "solution": ("course.shell.commands", N_("show the reference solution (after a pass)")),
    "verify": ("course.shell.commands", N_("check every exercise")),
    "doctor": ("course.shell.commands", N_("check the course manifest and your set-up")),
    "lesson": ("course.shell.commands", N_("print a lesson in the terminal")),
    "train": ("course.lab.cli", N_("the training lab: PyTorch vs JAX, with and without jit")),
    "grade": ("course.grader.cli", N_("grade many learners' submissions (instructors)")),
    "dev": ("course.devkit.commands", N_("write and verify a course of your own (authors)")),
}


# argparse's own words, which it passes through its module-level `_` each time it shows
# them: `_translate_argparse` points that `_` at the course's catalog.
ARGPARSE_WORDS = (
    N_("usage: "), N_("positional arguments"), N_("options"), N_("show this help message and exit"),
    N_("argument %(argument_name)s: %(message)s"), N_("unrecognized arguments: %s"),
    N_("the following arguments are required: %s"), N_("invalid %(type)s value: %(value)r"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"), N_("%(prog)s: error: %(message)s\n"),
    N_("expected one argument"), N_("ambiguous option: %(option)s could match %(matches)s"),
)


def _translate_argparse() -> None:
    argparse._ = _


def build_parser(load: str | None = None) -> argparse.ArgumentParser:
    from course.shell.terminal import CellWidthHelpFormatter  # help wrapped by course.i18n.linebreak

    _translate_argparse()
    parser = argparse.ArgumentParser(
        prog="jaxlings", formatter_class=CellWidthHelpFormatter,
        description=_("A terminal course from PyTorch to JAX, Flax and Optax. "
                      "Run with no command to open the course app."),
    )
    from course import __version__

    parser.add_argument("--version", action="version", version=f"jaxlings {__version__}",
                        help=_("show program's version number and exit"))
    parser.add_argument("--lang", choices=sorted(LANGUAGES), metavar="{" + ",".join(sorted(LANGUAGES)) + "}",
                        help=_("the language of the course (default: JAXLINGS_LANG, the app's setting, "
                               "the course's own language, the locale)"))
    parser.add_argument("--course", metavar="DIR",
                        help=_("the course to use: a folder with lessons/course.toml (default: "
                               "JAXLINGS_COURSE_ROOT, else the course that comes with jaxlings); its "
                               "workspace is DIR itself unless JAXLINGS_WORKSPACE says otherwise"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=_(help_text), description=_(help_text), formatter_class=CellWidthHelpFormatter)
        if name == load:
            mod = importlib.import_module(module)
            mod.add_arguments(p, name) if _takes_name(mod) else mod.add_arguments(p)
    return parser


def _takes_name(mod) -> bool:
    import inspect

    return len(inspect.signature(mod.add_arguments).parameters) == 2


def main(argv: list[str] | None = None) -> int:
    _stacks_on_sigusr1()
    try:
        code = _main(list(sys.argv[1:] if argv is None else argv))
        sys.stdout.flush()  # a closed pipe shows up here rather than at interpreter exit
        return code
    except KeyboardInterrupt:
        print("\n" + _("Interrupted."), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away()


def _stacks_on_sigusr1() -> None:
    """`kill -USR1 <pid>` prints every thread's stack to stderr: what a stuck `jaxlings` is doing."""
    import faulthandler
    import signal

    try:
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    except (AttributeError, ValueError, RuntimeError, OSError):  # no SIGUSR1 here, or stderr is not a file
        pass


def take_option(option: str, argv: list[str]) -> tuple[str | None, list[str]]:
    """Split a global `OPTION X` / `OPTION=X` off the command line (before or after the command)."""
    rest: list[str] = []
    value = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest.extend(argv[i:])
            break
        if a == option and i + 1 < len(argv):
            value, i = argv[i + 1], i + 2
            continue
        if a.startswith(option + "="):
            value, i = a.split("=", 1)[1], i + 1
            continue
        rest.append(a)
        i += 1
    return value, rest


def take_lang(argv: list[str]) -> tuple[str | None, list[str]]:
    """Split `--lang X` / `--lang=X` off the command line (it may come before the command)."""
    return take_option("--lang", argv)


def choose_course(folder: str | None) -> tuple[str | None, Callable[[], str] | None]:
    """Select the course (`--course` wins over JAXLINGS_COURSE_ROOT) and read its manifest.

    Returns the course's default language, and what makes it unusable (None: nothing), as a
    function that says it in the language chosen afterwards. Only a course chosen by --course
    or the environment is refused; the built-in one's manifest problems are the commands' to
    report (`jaxlings doctor` lists them)."""
    import os

    from course import paths
    from course.catalog import load_catalog, manifest_path

    if folder is not None:
        if not folder.strip():
            return None, lambda: _("--course needs a folder")
        paths.select_course(folder)
    elif os.environ.get(paths.COURSE_ENV):
        # Absolute from here on, for every process this one starts: a grading worker works in
        # a folder of its own, where a relative path names nothing.
        paths.select_course(os.environ[paths.COURSE_ENV])
    if os.environ.get(paths.WORKSPACE_ENV):
        os.environ[paths.WORKSPACE_ENV] = os.path.abspath(os.path.expanduser(os.environ[paths.WORKSPACE_ENV]))
    chosen = bool(os.environ.get(paths.COURSE_ENV))
    root = paths.course_root()
    if chosen and not manifest_path(root).is_file():
        return None, lambda: _("{folder} is not a course: it has no lessons/course.toml").format(folder=root)
    catalog = load_catalog(root, strict=False)
    if chosen and catalog.problems:
        first = catalog.problems[0].replace("\n", " ")
        return None, lambda: _(
            "the course in {folder} has a broken manifest ({n} problem(s), the first: {problem}); "
            "`jaxlings --course {folder} doctor` lists them").format(folder=root, n=len(catalog.problems),
                                                                    problem=first)
    return catalog.language, None


def _main(argv: list[str]) -> int:
    course, argv = take_option("--course", argv)
    lang, argv = take_lang(argv)
    if any(a in ("--course", "--lang") for a in argv[:argv.index("--") if "--" in argv else None]):
        build_parser().parse_args(argv)  # a global option without its value: argparse's error, exit 2
    if lang is not None and normalize(lang) is None:
        build_parser().parse_args(["--lang", lang])  # argparse's own error: the choices, exit 2
    course_language, problem = choose_course(course)
    set_language(resolve_language(lang, course=course_language))
    linebreak.install()
    command = next((a for a in argv if not a.startswith("-")), None)
    asks = any(a in ("-h", "--help", "--version") for a in argv)
    # `doctor` lists a broken course's problems itself; --help and --version need no course.
    if problem is not None and command != "doctor" and not (command is None and asks):
        print("jaxlings: " + problem(), file=sys.stderr)
        return 2
    if command is None and not asks:
        from course.tui.launch import run_app

        return run_app()
    parser = build_parser(load=command if command in COMMANDS else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    mod = importlib.import_module(COMMANDS[args.command][0])
    return int(mod.run(args) or 0)


def _reader_went_away() -> int:
    """The reader closed the pipe (`jaxlings list --json | head -1`): stop quietly.

    As the Python docs on SIGPIPE advise, point stdout at devnull so that the
    interpreter's final flush does not raise again; 141 is what a shell reports
    for a program ended by SIGPIPE.
    """
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout has no descriptor (tests capture it): nothing to flush later
        pass
    return 141

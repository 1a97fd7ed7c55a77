"""`jaxlings grade`: the instructor's command.

    jaxlings grade CLASS_DIR --out DIR           grade a class folder
    jaxlings grade --gradescope                  grade one submission inside Gradescope
    jaxlings grade --bundle gradescope --out DIR write Gradescope's autograder.zip

Exit status: 0 when grading finished (whatever the grades), 2 for bad input
or set-up, 130 when interrupted (finished submissions are kept: `--resume`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from course.grader.gradescope import VISIBILITIES
from course.engine.isolation import TIERS

GRADESCOPE_SUBMISSION = Path("/autograder/submission")
GRADESCOPE_RESULTS = Path("/autograder/results/results.json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (
        "A class folder holds one folder or archive (.zip, .tar, .tar.gz) per learner, each with\n"
        "their exercises/ files. Outputs in --out: report.json, gradebook.csv, junit.xml,\n"
        "feedback/<learner>.txt and submissions/<learner>.json (one per finished submission).\n"
        "Isolation of graded code, strongest first: " + " > ".join(TIERS) + "."
    )
    parser.add_argument("class_dir", nargs="?", type=Path, metavar="CLASS_DIR",
                        help="folder with one sub-folder or archive per submission")
    parser.add_argument("--out", type=Path, help="folder for the reports (required unless --gradescope)")
    parser.add_argument("--exercises", help="comma-separated exercise names to grade (default: all)")
    parser.add_argument("--checks", action="append", type=Path, default=[], metavar="DIR",
                        help="extra hidden checks (test_<exercise>*.py) kept outside the course; repeatable")
    parser.add_argument("--points", type=Path, metavar="FILE",
                        help="TOML with [exercises] points and [checks] weights")
    parser.add_argument("--partial", action="store_true",
                        help="split each exercise's points over its checks (default: all or nothing)")
    parser.add_argument("--jobs", type=int, default=0, help="submissions graded at once (default: CPU cores)")
    parser.add_argument("--seed", type=int, help="run seed; each check's seed derives from it (default: random)")
    parser.add_argument("--resume", action="store_true",
                        help="continue an interrupted run in --out, skipping finished submissions")
    parser.add_argument("--isolation", choices=("auto", *TIERS), default="auto",
                        help="sandbox for graded code (default: the strongest that works here)")
    parser.add_argument("--i-understand", action="store_true", dest="i_understand",
                        help="allow isolation that is not a sandbox (uid, process): graded code can then read "
                             "the course and the class folder, use the network and outlive its checks")
    parser.add_argument("--memory-mb", type=int, help="memory limit per learner child, in MiB")
    parser.add_argument("--submission-timeout", type=float, metavar="SECONDS",
                        help="total time limit per submission (default: 60 + 2 x the exercises' limits)")
    parser.add_argument("--quiet", action="store_true", help="no progress or table, only errors")
    parser.add_argument("--json", action="store_true", help="print the JSON report on stdout")
    parser.add_argument("--gradescope", action="store_true",
                        help="grade the one submission in Gradescope's autograder container")
    parser.add_argument("--submission", type=Path, default=GRADESCOPE_SUBMISSION,
                        help=f"with --gradescope: the submission folder (default {GRADESCOPE_SUBMISSION})")
    parser.add_argument("--results", type=Path, default=GRADESCOPE_RESULTS,
                        help=f"with --gradescope: where results.json goes (default {GRADESCOPE_RESULTS})")
    parser.add_argument("--visibility", choices=VISIBILITIES, default="visible",
                        help="Gradescope visibility of the tests (default visible)")
    parser.add_argument("--bundle", choices=("gradescope",),
                        help="write an autograder zip instead of grading")


def run(args: argparse.Namespace) -> int:
    from course.grader.batch import GradeError

    try:
        if args.bundle:
            return _bundle(args)
        if args.gradescope:
            return _gradescope(args)
        return _grade_class(args)
    except GradeError as exc:
        print(f"jaxlings grade: {exc}", file=sys.stderr)
        return 2


def _exercises(args) -> list[str] | None:
    if not args.exercises:
        return None
    return [n.strip() for n in args.exercises.split(",") if n.strip()]


def _options(args, **overrides):
    from course.grader.batch import GradeError, Options

    if args.jobs < 0:
        raise GradeError("--jobs must be 1 or more (0 means one per CPU core)")
    if args.memory_mb is not None and args.memory_mb < 64:
        raise GradeError("--memory-mb must be at least 64")
    if args.points is not None and not args.points.is_file():
        raise GradeError(f"--points {args.points}: no such file")
    fields = dict(class_dir=args.class_dir, out_dir=args.out, exercises=_exercises(args), checks_dirs=args.checks,
                  points_file=args.points, partial=args.partial, jobs=args.jobs, seed=args.seed,
                  resume=args.resume, isolation=args.isolation, memory_mb=args.memory_mb,
                  submission_timeout=args.submission_timeout, quiet=args.quiet or args.json,
                  i_understand=args.i_understand)
    fields.update(overrides)
    return Options(**fields)


def _grade_class(args) -> int:
    from course.grader.batch import GradeError, grade, print_summary

    if args.class_dir is None:
        raise GradeError("give the class folder: jaxlings grade CLASS_DIR --out DIR")
    if args.out is None:
        raise GradeError("give --out DIR for the reports")
    outcome = grade(_options(args))
    if args.json:
        sys.stdout.write((args.out / "report.json").read_text())
    elif not args.quiet:
        print_summary(outcome, args.out)
    if outcome.interrupted:
        print(f"Interrupted: finished submissions are kept; continue with --resume --out {args.out}",
              file=sys.stderr)
        return 130
    return 0


def _gradescope(args) -> int:
    from course.grader.batch import GradeError, grade
    from course.grader.discovery import Submission
    from course.grader.gradescope import results_json
    from course.grader.reports import write_atomic

    if not args.submission.is_dir():
        raise GradeError(f"--gradescope: no submission folder at {args.submission}")
    out = args.out or Path(tempfile.mkdtemp(prefix="jaxlings-gradescope-"))
    opts = _options(args, class_dir=None, out_dir=out, jobs=1, resume=False,
                    submissions=[Submission("submission", args.submission.resolve())],
                    hide=[args.submission.resolve(), args.results.resolve().parent])
    outcome = grade(opts)
    if not outcome.submissions:
        raise GradeError("the submission could not be graded")
    from course.grader.batch import secrets_for

    text = results_json(outcome.submissions[0], secrets_for(opts.checks_dirs), visibility=args.visibility,
                        partial=outcome.run["partial"])
    write_atomic(args.results, text)
    if not args.quiet:
        print(f"Score {outcome.submissions[0]['total']} / {outcome.submissions[0]['max_total']}; "
              f"isolation: {outcome.run['isolation']['tier']}; wrote {args.results}")
    return 130 if outcome.interrupted else 0


def _bundle(args) -> int:
    from course.grader.batch import GradeError
    from course.grader.bundle import BundleError, write_bundle

    if args.out is None:
        raise GradeError("give --out DIR for autograder.zip")
    for d in args.checks:
        if not d.is_dir():
            raise GradeError(f"--checks {d}: not a folder")
    if args.points is not None and not args.points.is_file():
        raise GradeError(f"--points {args.points}: no such file")
    try:
        target = write_bundle(args.out, exercises=_exercises(args), checks_dirs=args.checks,
                              points_file=args.points, partial=args.partial, visibility=args.visibility)
    except BundleError as exc:
        raise GradeError(str(exc)) from None
    print(f"Wrote {target}: upload it as the assignment's autograder on Gradescope.")
    return 0

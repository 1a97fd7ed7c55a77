"""`jaxlings grade`: the instructor's command.

    jaxlings grade CLASS_DIR --out DIR                 grade a class folder
    jaxlings grade CLASS_DIR --out DIR --shard K/N     grade shard K of N (one task of a batch job)
    jaxlings grade merge DIR... --out DIR              join the shards' outputs into one set of reports
    jaxlings grade --gradescope                        grade one submission inside Gradescope
    jaxlings grade --bundle gradescope --out DIR       write Gradescope's autograder.zip
    jaxlings grade --bundle github-classroom --out DIR write a GitHub Classroom workflow and grading kit

Exit status: 0 when grading finished (whatever the grades), 2 for bad input
or set-up, 130 when interrupted (finished submissions are kept: `--resume`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from course.i18n import _
from course.grader.gradescope import VISIBILITIES
from course.engine.isolation import TIERS

GRADESCOPE_SUBMISSION = Path("/autograder/submission")
GRADESCOPE_RESULTS = Path("/autograder/results/results.json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from course.shell.terminal import CellWidthRawDescriptionHelpFormatter

    parser.formatter_class = CellWidthRawDescriptionHelpFormatter  # the examples keep their lines
    parser.epilog = _(
        "A class folder holds one folder or archive (.zip, .tar, .tar.gz) per learner, each with\n"
        "their exercises/ files. Outputs in --out: report.json, gradebook.csv, junit.xml,\n"
        "feedback/<learner>.txt and submissions/<learner>.json (one per finished submission).\n"
        "Isolation of graded code, strongest first: {tiers}."
    ).format(tiers=" > ".join(TIERS))
    parser.add_argument("class_dir", nargs="*", metavar="CLASS_DIR",
                        help=_("folder with one sub-folder or archive per submission; "
                             "or `merge DIR...`: the shards' output folders"))
    parser.add_argument("--shard", metavar="K/N",
                        help=_("grade only shard K of N (1 <= K <= N): a fixed part of the class, chosen by learner id"))
    parser.add_argument("--out", type=Path, help=_("folder for the reports (required unless --gradescope)"))
    parser.add_argument("--exercises", help=_("comma-separated exercise names to grade (default: all)"))
    parser.add_argument("--checks", action="append", type=Path, default=[], metavar="DIR",
                        help=_("extra hidden checks (test_<exercise>*.py) kept outside the course; repeatable"))
    parser.add_argument("--points", type=Path, metavar="FILE",
                        help=_("TOML with [exercises] points and [checks] weights"))
    parser.add_argument("--partial", action="store_true",
                        help=_("split each exercise's points over its checks (default: all or nothing)"))
    parser.add_argument("--jobs", type=int, default=0, help=_("submissions graded at once (default: CPU cores)"))
    parser.add_argument("--seed", type=int, help=_("run seed; each check's seed derives from it (default: random)"))
    parser.add_argument("--resume", action="store_true",
                        help=_("continue an interrupted run in --out, skipping finished submissions"))
    parser.add_argument("--isolation", choices=("auto", *TIERS), default="auto",
                        help=_("sandbox for graded code (default: the strongest that works here)"))
    parser.add_argument("--i-understand", action="store_true", dest="i_understand",
                        help=_("allow isolation that is not a sandbox (uid, process): graded code can then read "
                             "the course and the class folder, use the network and outlive its checks"))
    parser.add_argument("--memory-mb", type=int, help=_("memory limit per learner child, in MiB"))
    parser.add_argument("--submission-timeout", type=float, metavar="SECONDS",
                        help=_("total time limit per submission (default: 60 + 2 x the exercises' limits)"))
    parser.add_argument("--worker-max-mb", type=int, metavar="MiB",
                        help=_("replace a grading worker after a submission once it holds this much memory "
                             "(default 1024; 0: never)"))
    parser.add_argument("--worker-max-submissions", type=int, metavar="N",
                        help=_("replace a grading worker after N submissions (default: only by memory)"))
    parser.add_argument("--quiet", action="store_true", help=_("no progress or table, only errors"))
    parser.add_argument("--json", action="store_true", help=_("print the JSON report on stdout"))
    parser.add_argument("--gradescope", action="store_true",
                        help=_("grade the one submission in Gradescope's autograder container"))
    parser.add_argument("--submission", type=Path, default=GRADESCOPE_SUBMISSION,
                        help=_("with --gradescope: the submission folder (default {path})").format(path=GRADESCOPE_SUBMISSION))
    parser.add_argument("--results", type=Path, default=GRADESCOPE_RESULTS,
                        help=_("with --gradescope: where results.json goes (default {path})").format(path=GRADESCOPE_RESULTS))
    parser.add_argument("--visibility", choices=VISIBILITIES, default="visible",
                        help=_("Gradescope visibility of the tests (default visible)"))
    parser.add_argument("--bundle", choices=("gradescope", "github-classroom"),
                        help=_("write an autograder zip (gradescope) or a workflow and grading kit "
                             "(github-classroom) instead of grading"))
    parser.add_argument("--kit-repo", metavar="OWNER/NAME",
                        help=_("with --bundle github-classroom: the private repository the workflow fetches "
                             "the grading kit from (default: the JAXLINGS_KIT_REPO variable of the organisation)"))


def run(args: argparse.Namespace) -> int:
    from course.grader.batch import GradeError

    try:
        positional = list(args.class_dir)
        if positional[:1] == ["merge"]:
            return _merge(args, [Path(p) for p in positional[1:]])
        if len(positional) > 1:
            raise GradeError(_("give one class folder, not {n} (to join shards: jaxlings grade merge DIR...)").format(
                n=len(positional)))
        args.class_dir = Path(positional[0]) if positional else None
        if args.bundle:
            return _bundle(args)
        if args.gradescope:
            return _gradescope(args)
        return _grade_class(args)
    except GradeError as exc:
        print(_("jaxlings grade: {error}").format(error=exc), file=sys.stderr)
        return 2


def _exercises(args) -> list[str] | None:
    if not args.exercises:
        return None
    return [n.strip() for n in args.exercises.split(",") if n.strip()]


def _options(args, **overrides):
    from course.grader.batch import GradeError, Options

    if args.jobs < 0:
        raise GradeError(_("--jobs must be 1 or more (0 means one per CPU core)"))
    if args.memory_mb is not None and args.memory_mb < 64:
        raise GradeError(_("--memory-mb must be at least 64"))
    if args.points is not None and not args.points.is_file():
        raise GradeError(_("--points {file}: no such file").format(file=args.points))
    if (args.worker_max_mb or 0) < 0 or (args.worker_max_submissions or 0) < 0:
        raise GradeError(_("--worker-max-mb and --worker-max-submissions must be 0 or more"))
    recycle = {k: v for k, v in (("rss_mb", args.worker_max_mb), ("submissions", args.worker_max_submissions))
               if v is not None}
    fields = dict(recycle=recycle or None, shard=_shard(args.shard), class_dir=args.class_dir, out_dir=args.out, exercises=_exercises(args), checks_dirs=args.checks,
                  points_file=args.points, partial=args.partial, jobs=args.jobs, seed=args.seed,
                  resume=args.resume, isolation=args.isolation, memory_mb=args.memory_mb,
                  submission_timeout=args.submission_timeout, quiet=args.quiet or args.json,
                  i_understand=args.i_understand)
    fields.update(overrides)
    return Options(**fields)


def _shard(text: str | None) -> tuple[int, int] | None:
    from course.grader.batch import GradeError

    if text is None:
        return None
    k, sep, n = text.partition("/")
    try:
        index, count = int(k), int(n)
    except ValueError:
        index = count = 0
    if not sep or not 1 <= index <= count:
        raise GradeError(_("--shard {value}: give K/N with 1 <= K <= N, e.g. --shard 2/8").format(value=text))
    return index, count


def _merge(args, dirs: list[Path]) -> int:
    from course.grader.batch import GradeError, print_summary
    from course.grader.merge import merge

    if args.out is None:
        raise GradeError(_("grade merge: give --out DIR for the merged reports"))
    outcome = merge(dirs, args.out)
    if args.json:
        sys.stdout.write((args.out / "report.json").read_text())
    elif not args.quiet:
        print_summary(outcome, args.out)
    return 0


def _grade_class(args) -> int:
    from course.grader.batch import GradeError, grade, print_summary

    if args.class_dir is None:
        raise GradeError(_("give the class folder: jaxlings grade CLASS_DIR --out DIR"))
    if args.out is None:
        raise GradeError(_("give --out DIR for the reports"))
    outcome = grade(_options(args))
    if args.json:
        sys.stdout.write((args.out / "report.json").read_text())
    elif not args.quiet:
        print_summary(outcome, args.out)
    if outcome.interrupted:
        print(_("Interrupted: finished submissions are kept; continue with --resume --out {folder}").format(
            folder=args.out), file=sys.stderr)
        return 130
    return 0


def _gradescope(args) -> int:
    from course.grader.batch import GradeError

    if not args.submission.is_dir():
        raise GradeError(_("--gradescope: no submission folder at {folder}").format(folder=args.submission))
    # Without --out, the run's own reports (gradebook, feedback, report.json) are only the means to
    # results.json: they go in a temporary folder that goes with the run.
    out = args.out or Path(tempfile.mkdtemp(prefix="jaxlings-gradescope-"))
    try:
        return _gradescope_into(args, out)
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)


def _gradescope_into(args, out: Path) -> int:
    from course.grader.batch import GradeError, grade, secrets_for
    from course.grader.discovery import Submission
    from course.grader.gradescope import (NEEDED_MB, PRESTART_MB, SPLIT_MB, SUBMISSION_BUDGET_S, WORKER_RESERVE_MB,
                                          ProgressiveResults,
                                          container_memory_mb, not_graded_json, results_json)
    from course.grader.reports import write_atomic

    limit = container_memory_mb()
    if limit is not None and limit < NEEDED_MB:
        # Refused before grading: a learner child capped to fit would fail the reference
        # solutions too, and each test would blame the learner's code for it.
        write_atomic(args.results, not_graded_json(
            f"Not graded: the autograder container is too small ({limit} MB; needs {NEEDED_MB} MB). "
            "Instructor: choose a larger autograder in the assignment's settings, then regrade.",
            visibility=args.visibility))
        raise GradeError(_("the autograder container is too small ({limit} MB; needs {needed} MB): "
                           "wrote {path} saying so, without grading").format(
                               limit=limit, needed=NEEDED_MB, path=args.results))
    memory_mb = args.memory_mb
    if memory_mb is None and limit is not None:
        memory_mb = max(256, min(4096, limit - WORKER_RESERVE_MB))
    secrets = secrets_for(args.checks)
    progress = ProgressiveResults(args.results, secrets, visibility=args.visibility,
                                  partial=args.partial or args.points is not None)
    # A lone submission is split over the workers where the container holds them (pool.split):
    # GitHub's runners, a large Gradescope container. A smaller one grades with one worker.
    jobs = 1 if limit is not None and limit < SPLIT_MB else (args.jobs or os.cpu_count() or 1)
    opts = _options(args, class_dir=None, out_dir=out, jobs=jobs, resume=False, memory_mb=memory_mb,
                    submission_timeout=args.submission_timeout or SUBMISSION_BUDGET_S,
                    submissions=[Submission("submission", args.submission.resolve())],
                    hide=[args.submission.resolve(), args.results.resolve().parent],
                    on_start=progress.start, on_exercise=progress.exercise,
                    prestart=limit is None or limit >= PRESTART_MB)
    outcome = grade(opts)
    if not outcome.submissions:
        raise GradeError(_("the submission could not be graded"))
    sub = outcome.submissions[0]
    text = results_json(sub, secrets, visibility=args.visibility, partial=outcome.run["partial"])
    write_atomic(args.results, text)
    if not args.quiet:
        print(_("Score {total} / {max_total}; isolation: {tier}; wrote {path}").format(
            total=sub["total"], max_total=sub["max_total"], tier=outcome.run["isolation"]["tier"], path=args.results))
    return 130 if outcome.interrupted else 0


def _bundle(args) -> int:
    from course.grader.batch import GradeError
    from course.grader.bundle import BundleError, write_bundle

    if args.out is None:
        raise GradeError(_("give --out DIR for the bundle"))
    if args.bundle == "github-classroom":
        return _classroom(args)
    for d in args.checks:
        if not d.is_dir():
            raise GradeError(_("--checks {folder}: not a folder").format(folder=d))
    if args.points is not None and not args.points.is_file():
        raise GradeError(_("--points {file}: no such file").format(file=args.points))
    try:
        target = write_bundle(args.out, exercises=_exercises(args), checks_dirs=args.checks,
                              points_file=args.points, partial=args.partial, visibility=args.visibility)
    except BundleError as exc:
        raise GradeError(str(exc)) from None
    print(_("Wrote {path}: upload it as the assignment's autograder on Gradescope.").format(path=target))
    return 0


def _classroom(args) -> int:
    from course.grader.batch import GradeError
    from course.grader.bundle import BundleError
    from course.grader.classroom import write_classroom

    for d in args.checks:
        if not d.is_dir():
            raise GradeError(_("--checks {folder}: not a folder").format(folder=d))
    if args.points is not None and not args.points.is_file():
        raise GradeError(_("--points {file}: no such file").format(file=args.points))
    if args.partial:
        raise GradeError(_("--partial: GitHub Classroom's command grader gives a step all of its points or none"))
    try:
        workflow, kit = write_classroom(args.out, exercises=_exercises(args), checks_dirs=args.checks,
                                        points_file=args.points, kit_repo=args.kit_repo)
    except BundleError as exc:
        raise GradeError(str(exc)) from None
    where = (_("a PRIVATE repository ({repo})").format(repo=args.kit_repo) if args.kit_repo
             else _("a PRIVATE repository and name it in the JAXLINGS_KIT_REPO variable"))
    print(_("Wrote {workflow}: add it to the assignment's template repository.\n"
            "Wrote {kit}: push it to {where}; give the organisation a read-only JAXLINGS_KIT_TOKEN secret "
            "for it. See docs/grading.md.").format(workflow=workflow, kit=kit, where=where))
    return 0

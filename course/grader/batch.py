"""Grading a class: options in, reports out.

Order of work: validate everything the instructor gave (exercises, extra
checks, points file, class folder, output folder) before any worker starts;
choose the isolation; grade with the pool, writing each submission's result
atomically as it finishes; then build every report from those files, so a
resumed run reports on the whole class.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import re
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from importlib import metadata
from pathlib import Path
from typing import Callable

from course import paths
from course.grader import reports, safe
from course.grader.console import Live, summary_table
from course.grader.discovery import Submission, discover, source_fingerprint
from course.engine.isolation import HostFolder, choose
from course.grader.pool import Pool
from course.grader.scoring import exact, load_scheme
from course.grader.stopping import Stopping

RUN_FILE = "run.json"
RESULTS_DIR = "submissions"


class GradeError(Exception):
    """Bad input or set-up; the message tells the instructor what to fix."""


@dataclass
class Options:
    class_dir: Path | None
    out_dir: Path
    exercises: list[str] | None = None
    checks_dirs: list[Path] = field(default_factory=list)
    points_file: Path | None = None
    partial: bool = False
    jobs: int = 0
    seed: int | None = None
    resume: bool = False
    isolation: str = "auto"
    memory_mb: int | None = None
    submission_timeout: float | None = None
    quiet: bool = False
    submissions: list[Submission] | None = None  # given directly (Gradescope) instead of a class folder
    hide: list[Path] = field(default_factory=list)  # more paths graded code must not see
    shard: tuple[int, int] | None = None  # (K, N): grade only shard K of N
    on_exercise: Callable[[dict], None] | None = None  # called as each exercise of a submission is settled
    on_start: Callable[[dict], None] | None = None  # called with the run (run.json) before grading starts
    recycle: dict | None = None  # when workers are replaced: {"submissions": n, "rss_mb": m}
    prestart: bool = True  # start each next learner child while the current one is checked
    i_understand: bool = False  # consent to a tier that is not a sandbox (uid, process)


@dataclass
class Outcome:
    run: dict
    submissions: list[dict]
    interrupted: bool = False


def selected_exercises(catalog, names: list[str] | None) -> list:
    by_name = {e.name: e for e in catalog.exercises}
    if not names:
        return list(catalog.exercises)
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise GradeError(f"unknown exercise(s): {', '.join(unknown)}. "
                         f"Known: {', '.join(by_name)}")
    return [by_name[n] for n in dict.fromkeys(names)]


def check_extra_dirs(dirs: list[Path], exercises: list) -> list[Path]:
    resolved = []
    names = [e.name for e in exercises]
    for d in dirs:
        if not d.is_dir():
            raise GradeError(f"--checks {d}: not a folder")
        files = sorted(d.glob("test_*.py"))
        if not files:
            raise GradeError(f"--checks {d}: no test_<exercise>*.py files in it")
        stray = [f.name for f in files if not any(re.match(rf"test_{re.escape(n)}(\b|_|\.)", f.name) for n in names)]
        if len(stray) == len(files):
            raise GradeError(f"--checks {d}: none of its files names an exercise being graded "
                             f"(files must be test_<exercise>*.py): {', '.join(stray[:5])}")
        resolved.append(d.resolve())
    return resolved


def versions() -> dict:
    out = {"python": sys.version.split()[0]}
    for dist in ("jaxlings", "jax", "jaxlib", "flax", "optax", "numpy", "pytest"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _config_key(exercises: list[dict], scheme, checks_dirs: list[Path]) -> str:
    h = hashlib.sha256(json.dumps([exercises, scheme.__dict__, [str(d) for d in checks_dirs]],
                                  sort_keys=True, default=str).encode())
    for d in checks_dirs:
        for f in sorted(d.glob("test_*.py")):
            h.update(f.name.encode() + hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()[:16]


def _prepare_out(opts: Options, config_key: str, shard: dict | None) -> tuple[int, dict[str, dict]]:
    """The run seed, and results that a resume may keep (keyed by submission id)."""
    out = opts.out_dir
    results_dir = out / RESULTS_DIR
    previous = out / RUN_FILE
    kept: dict[str, dict] = {}
    if opts.resume and previous.exists():
        try:
            run = json.loads(previous.read_text())
            seed = int(run["seed"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise GradeError(f"--resume: cannot read {previous} ({exc}); grade into a fresh --out") from None
        if opts.seed is not None and opts.seed != seed:
            raise GradeError(f"--resume: this run was graded with --seed {seed}, not {opts.seed}")
        if run.get("shard") != shard:
            raise GradeError("--resume: the interrupted run graded another --shard (or another class); "
                             "grade into a fresh --out")
        if run.get("config_key") != config_key:
            raise GradeError("--resume: the exercises, points or extra checks differ from the interrupted "
                             "run's; grade into a fresh --out")
        for f in sorted(results_dir.glob("*.json")):
            try:
                data = json.loads(f.read_text())
                kept[data["id"]] = data
            except (OSError, ValueError, KeyError):
                continue  # a damaged file is simply regraded
        return seed, kept
    if results_dir.exists() and any(results_dir.glob("*.json")):
        raise GradeError(f"{out} already holds graded results: pass --resume to continue that run, "
                         "or choose another --out")
    seed = opts.seed if opts.seed is not None else random.SystemRandom().randrange(1, 2**31)
    return seed, kept


def grade(opts: Options) -> Outcome:
    from course.catalog import load_catalog

    catalog = load_catalog()
    exercises = selected_exercises(catalog, opts.exercises)
    checks_dirs = check_extra_dirs(opts.checks_dirs, exercises)
    from course.grader.scoring import PointsError

    try:
        scheme = load_scheme(opts.points_file, partial=opts.partial, known={e.name for e in catalog.exercises})
    except PointsError as exc:
        raise GradeError(str(exc)) from None
    ex_config = [dict(name=e.name, file=str(e.file), max_points=scheme.points_for(e.name, e.points or 1))
                 for e in exercises]

    if opts.submissions is not None:
        submissions, ignored = opts.submissions, []
    else:
        from course.grader.discovery import DiscoveryError

        try:
            submissions, ignored = discover(opts.class_dir)
        except DiscoveryError as exc:
            raise GradeError(str(exc)) from None
        if not submissions:
            raise GradeError(f"{opts.class_dir} holds no submissions (one folder or archive per learner)")

    class_ids = sorted(s.id for s in submissions)
    if opts.shard is not None:
        index, count = opts.shard
        submissions = [s for s in submissions if shard_of(s.id, count) == index]

    created = not opts.out_dir.exists()
    opts.out_dir.mkdir(parents=True, exist_ok=True)
    try:
        return _grade_into(opts, catalog, exercises, ex_config, checks_dirs, scheme, submissions, ignored, class_ids)
    except GradeError:
        # A run refused before grading leaves no folder behind (it held only run.json).
        if created and not any((opts.out_dir / RESULTS_DIR).glob("*.json")):
            import shutil

            shutil.rmtree(opts.out_dir, ignore_errors=True)
        raise


def _grade_into(opts, catalog, exercises, ex_config, checks_dirs, scheme, submissions, ignored, class_ids) -> Outcome:
    key = _config_key(ex_config, scheme, checks_dirs)
    shard = None if opts.shard is None else dict(index=opts.shard[0], count=opts.shard[1], class_ids=class_ids)
    run_seed, kept = _prepare_out(opts, key, shard)
    secrets = [str(p) for p in (*course_secrets(catalog.root), *checks_dirs)]

    with Stopping() as stopping:
        run, interrupted = None, False
        # Locked while this run lives; a run killed with SIGKILL leaves it to the next run's sweep.
        work_folder = HostFolder("grade")
        work_root = work_folder.path
        try:
            os.chmod(work_root, 0o711)  # each child's uid must reach its own copy, and list nothing
            run, config, todo, jobs, submission_timeout = _set_up(
                opts, catalog, exercises, ex_config, checks_dirs, scheme, submissions, kept, key, run_seed,
                work_root, ignored, shard, secrets)
            if opts.on_start is not None:
                opts.on_start(run)
            with Live(len(todo) * len(ex_config), len(todo), opts.quiet) as live:
                seen: dict[str, int] = {}

                def on_event(msg: dict) -> None:
                    if msg.get("event") == "exercise":
                        seen[msg["submission"]] = seen.get(msg["submission"], 0) + 1
                        if opts.on_exercise is not None:
                            opts.on_exercise(msg)
                    live.event(msg)

                def on_result(result: dict) -> None:
                    _save(opts.out_dir, result, secrets)
                    live.submission_done(result, len(ex_config) - seen.pop(result["id"], 0))

                pool = Pool(config, jobs, submission_timeout, on_event)
                try:
                    if todo:
                        pool.run(todo, on_result)
                except KeyboardInterrupt:
                    interrupted = True
                    stopping.stop()
                    live.say("Interrupted: stopping the workers and writing the reports ...")
                    pool.close()
                run["workers_started"] = pool.workers_started
        except KeyboardInterrupt:
            interrupted = True  # before the pool started: nothing in hand is lost
            stopping.stop()
        finally:
            stopping.stop()
            work_folder.remove()
        if run is None:
            raise KeyboardInterrupt
        run["finished"] = None if interrupted else _now()
        reports.write_atomic(opts.out_dir / RUN_FILE, json.dumps(safe.clean(run), indent=2) + "\n")
        results = _load_results(opts.out_dir, [s.id for s in submissions])
        if interrupted:  # every learner keeps a row: those not graded yet say so
            done = {r["id"] for r in results}
            results += [not_graded_result(s, ex_config, scheme, run_seed) for s in submissions if s.id not in done]
        write_reports(opts.out_dir, run, results, secrets)
    return Outcome(run, results, interrupted)


def _set_up(opts, catalog, exercises, ex_config, checks_dirs, scheme, submissions, kept, key, run_seed,
            work_root, ignored, shard, secrets):
    """Isolation, limits, run.json and the work list; unsupported hand-ins are settled here."""
    hidden = [*course_secrets(catalog.root), catalog.root / ".git", *checks_dirs, opts.out_dir.resolve()]
    if opts.class_dir is not None:
        hidden.append(opts.class_dir.resolve())
    hidden += opts.hide
    from course.engine.isolation import IsolationError

    try:
        isolation = choose(opts.isolation, [p for p in hidden if p.exists()], work_root,
                           allow_weak=opts.i_understand, grading=True)
    except IsolationError as exc:
        raise GradeError(str(exc)) from None

    jobs = opts.jobs or os.cpu_count() or 1
    timeouts = [_time_budget(e, checks_dirs) for e in exercises]
    submission_timeout = opts.submission_timeout or (60 + 2 * sum(timeouts))
    run = dict(
        seed=run_seed, config_key=key, course=course_digest(catalog, exercises), course_title=catalog.title,
        course_root=str(catalog.root), started=_now(), finished=None,
        jobs=jobs, exercises=[e["name"] for e in ex_config],
        points=dict((e["name"], e["max_points"]) for e in ex_config),
        max_points=float(sum((exact(e["max_points"]) for e in ex_config), Fraction(0))), partial=scheme.partial,
        extra_checks=[str(d) for d in checks_dirs], isolation=isolation.describe(), versions=versions(),
        limits=dict(submission_timeout_s=submission_timeout, memory_mb=opts.memory_mb,
                    exercise_timeouts_s=dict(zip([e["name"] for e in ex_config], timeouts))),
        ignored=ignored, shard=shard, submissions=[s.id for s in submissions],
    )
    reports.write_atomic(opts.out_dir / RUN_FILE, json.dumps(safe.clean(run), indent=2) + "\n")

    todo = []
    for sub in submissions:
        fp = source_fingerprint(sub)
        old = kept.get(sub.id)
        if old and old.get("fingerprint") == fp and old.get("status") != "interrupted":
            continue
        if sub.problem is not None:
            _save(opts.out_dir, unsupported_result(sub, fp, ex_config, scheme, run_seed), secrets)
            continue
        todo.append(dict(id=sub.id, source=str(sub.source.resolve()), fingerprint=fp))

    config = dict(
        exercises=ex_config, scheme=dict(exercise_points=scheme.exercise_points,
                                         check_weights=scheme.check_weights, partial=scheme.partial),
        run_seed=run_seed, extra_check_dirs=[str(d) for d in checks_dirs], memory_mb=opts.memory_mb,
        isolation=dict(tier=isolation.tier, hidden=[str(p) for p in isolation.hidden],
                       work_root=str(isolation.work_root), bwrap=isolation.bwrap,
                       pids_cgroup=isolation.pids_cgroup),
        recycle=opts.recycle, prestart=opts.prestart,
    )
    return run, config, todo, jobs, submission_timeout


def shard_of(submission_id: str, count: int) -> int:
    """The shard (1..count) a learner belongs to: a function of the id alone, whatever else is in the class."""
    digest = hashlib.sha256(submission_id.encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def course_digest(catalog, exercises: list) -> str:
    """What the course checks with for these exercises: their check modules and reference solutions."""
    h = hashlib.sha256()
    for e in exercises:
        for f in (e.check_path(), e.solution_path()):
            h.update(str(e.name).encode() + b"\0")
            h.update(hashlib.sha256(f.read_bytes()).digest() if f.is_file() else b"missing")
    return h.hexdigest()[:16]


def unsupported_result(sub: Submission, fingerprint: str, ex_config: list[dict], scheme, run_seed: int) -> dict:
    """A learner whose hand-in cannot be read still gets a row: 0 points and the reason."""
    from course.grader.results import finish, not_run
    from course.grader.scoring import derive_seed

    exercises = {e["name"]: not_run(e["name"], scheme=scheme, max_points=e["max_points"], cause="not_submitted",
                                    message=sub.problem, seed=derive_seed(run_seed, sub.id, e["name"]))
                 for e in ex_config}
    result = dict(id=sub.id, source=sub.source.name, fingerprint=fingerprint, status="unsupported",
                  notes=[sub.problem], exercises=exercises, duration=0.0)
    return finish(result, {e["name"]: e["max_points"] for e in ex_config})


def not_graded_result(sub: Submission, ex_config: list[dict], scheme, run_seed: int) -> dict:
    """A learner the run stopped before: a row with 0 points and status "not_graded", never saved
    with the finished submissions, so --resume grades it."""
    from course.grader.results import finish, not_run
    from course.grader.scoring import derive_seed

    message = "grading was interrupted before this submission was graded; continue with --resume"
    exercises = {e["name"]: not_run(e["name"], scheme=scheme, max_points=e["max_points"], cause="not_reached",
                                    message=message, seed=derive_seed(run_seed, sub.id, e["name"]))
                 for e in ex_config}
    result = dict(id=sub.id, source=sub.source.name, status="not_graded", notes=[message], exercises=exercises,
                  duration=0.0)
    return finish(result, {e["name"]: e["max_points"] for e in ex_config})


def _time_budget(exercise, checks_dirs: list[Path]) -> float:
    """The engine's time limit for the exercise's checks, one per check module it will run."""
    from course.engine.settings import DEFAULT_TIMEOUT, check_settings

    def one(path: Path) -> float:
        try:
            declared = check_settings(path).timeout if path.is_file() else None
        except (SyntaxError, ValueError, TypeError):
            declared = None
        return float(exercise.timeout or declared or DEFAULT_TIMEOUT)

    extra = [f for d in checks_dirs for f in d.glob(f"test_{exercise.name}*.py")
             if re.match(rf"^test_{re.escape(exercise.name)}(_.*)?\.py$", f.name)]
    return sum(one(p) for p in [exercise.check_path(), *extra])


def _save(out_dir: Path, result: dict, secrets: list[str]) -> None:
    # Cleaned once on the way in, so every later reader gets text any writer can carry.
    reports.write_atomic(out_dir / RESULTS_DIR / f"{result['id']}.json",
                         json.dumps(safe.clean(result), indent=1, ensure_ascii=False) + "\n")


def _load_results(out_dir: Path, ids: list[str]) -> list[dict]:
    out = []
    for ident in ids:
        f = out_dir / RESULTS_DIR / f"{ident}.json"
        if f.exists():
            out.append(safe.clean(json.loads(f.read_text(encoding="utf-8", errors="replace"))))
    return out


def course_secrets(root: Path) -> list[Path]:
    """What graded code must never read: reference solutions, hidden checks, and a course's
    alternative solutions and attacks on its checks."""
    from course.catalog import checks_dir

    return list(dict.fromkeys([root / "solutions", checks_dir(root), paths.CHECKS_DIR,
                               root / "alternatives", root / "attacks"]))


def secrets_for(checks_dirs: list[Path]) -> list[str]:
    """Paths whose mention marks a message line as showing hidden material."""
    from course.catalog import load_catalog

    root = load_catalog().root
    return [str(p) for p in (*course_secrets(root), *checks_dirs)]


def write_reports(out_dir: Path, run: dict, results: list[dict], secrets: list[str]) -> None:
    results = sorted(results, key=lambda r: r["id"])  # one order, however the class was split or listed
    reports.write_atomic(out_dir / "report.json", reports.report_json(run, results))
    reports.write_atomic(out_dir / "gradebook.csv", reports.gradebook_csv(run["exercises"], results))
    reports.write_atomic(out_dir / "junit.xml", reports.junit_xml(results, secrets))
    for sub in results:
        reports.write_atomic(out_dir / "feedback" / f"{sub['id']}.txt", reports.feedback_text(sub, secrets))


def print_summary(outcome: Outcome, out_dir: Path) -> None:
    summary_table(outcome.submissions, outcome.run["isolation"], out_dir, ignored=outcome.run.get("ignored", []))


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")

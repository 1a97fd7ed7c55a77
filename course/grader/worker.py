"""A trusted grading worker: one long-lived process grading submissions one after another.

It imports the engine (pytest, JAX, the reference solutions) once, then for
each exercise of each submission makes a throw-away copy of the submission,
and asks the engine to check it with the learner's child sandboxed in that
copy. Learner code never runs in this process.

Protocol (JSON lines): the pool writes one config line, then one job line per
submission; the worker answers `ready`, then per job an `exercise` event after
each exercise and a `done` event with the whole result. Its own stdout is
moved to stderr first, so nothing else can write into the protocol stream.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

from course.grader.archives import ArchiveError, extract_archive
from course.grader.discovery import Scan, Submission, locate, scan_files
from course.engine.caches import CompileCache
from course.grader.engine import Engine, merge
from course.engine.isolation import Isolation
from course.grader.results import exercise_entry, finish, not_run
from course.grader.scoring import Scheme, derive_seed

MAX_COPY_BYTES = 64 * 1024 * 1024
# Past this, the worker drops what its checks compiled (`_forget_compiled`), well under
# the pool's RECYCLE_RSS_MB, past which a worker is replaced after its submission; and
# then again only once it has grown by FORGET_STEP_MB more than it held after that.
FORGET_RSS_MB = 768
FORGET_STEP_MB = 96


class Worker:
    def __init__(self, config: dict, emit) -> None:
        self.config = config
        self.emit = emit
        self.slot = int(config["slot"])
        iso = config["isolation"]
        self.isolation = Isolation(iso["tier"], tuple(Path(p) for p in iso["hidden"]),
                                   Path(iso["work_root"]), bwrap=iso.get("bwrap"),
                                   pids_cgroup=iso.get("pids_cgroup"))
        os.chdir(self.isolation.work_root)  # nothing of the caller's folder; -P keeps it off sys.path anyway
        # Started first, so that it imports JAX, Optax and Flax while this process imports the
        # engine, the checks and the references: else the first child waited seconds for it.
        self.zygote = _start_zygote(self.isolation, config)
        self.scheme = Scheme(config["scheme"]["exercise_points"], config["scheme"]["check_weights"],
                             config["scheme"]["partial"])
        self.exercises = config["exercises"]  # [{"name", "file", "max_points"}]
        self.engine = Engine(extra_check_dirs=[Path(p) for p in config["extra_check_dirs"]],
                             memory_mb=config.get("memory_mb"), exercises=[e["name"] for e in self.exercises])
        self.scratch = self.isolation.work_root / f"slot-{self.slot}"
        self.scratch.mkdir(parents=True, exist_ok=True)
        # The trusted side's compiled programs, kept for this worker's later submissions and
        # removed with the run's work folder. One per worker: JAX writes entries unlocked.
        self.compile_cache = CompileCache(trusted=self.scratch / "xla-trusted", learner=None)
        # A small container (Gradescope's, without prestart) keeps the least it can: it drops
        # compiled programs after every exercise.
        self.forgetting = Forgetting(FORGET_RSS_MB if config.get("prestart", True) else 0)

    def close(self) -> None:
        if self.zygote is not None:
            _stop_zygote(self.zygote)
            self.zygote = None

    def grade(self, job: dict) -> dict:
        """The submission's result; for a part of it (`job["exercises"]`, see pool.split), the
        result of those exercises only, joined with the other parts' by the pool."""
        wanted = job.get("exercises")
        exercises = [e for e in self.config["exercises"] if wanted is None or e["name"] in wanted]
        sub = Submission(job["id"], Path(job["source"]))
        started = time.monotonic()
        result = dict(id=sub.id, source=sub.source.name, fingerprint=job["fingerprint"], status="graded",
                      notes=[], exercises={})
        staging = Path(tempfile.mkdtemp(dir=self.scratch, prefix="sub-"))
        try:
            root = sub.source
            if sub.is_archive:
                root = staging / "extracted"
                try:
                    extraction = extract_archive(sub.source, root)
                    result["notes"] += [f"left out of the archive: {s}" for s in extraction.skipped[:20]]
                except ArchiveError as exc:
                    result["status"] = "unreadable"
                    result["notes"].append(f"the archive was not graded: {exc}")
            scan = scan_files(root) if root.is_dir() else Scan([], None)
            found = locate(root, {e["name"]: e["file"] for e in self.exercises}, scan.files)
            if not found and result["status"] == "graded":
                result["status"] = "empty"
                result["notes"].append(_empty_note(root, scan))
            elif scan.stopped:
                result["notes"].append(f"the search for exercise files stopped early: {scan.stopped}")
            files, left_out = copy_plan(root, scan.files, [f.path for f in found.values()])
            if left_out:
                result["notes"].append(
                    f"left out of the copy your code ran in (over {MAX_COPY_BYTES // 2**20} MiB in all; "
                    f"exercise files are always copied first): " + ", ".join(left_out[:10])
                    + (f" and {len(left_out) - 10} more" if len(left_out) > 10 else ""))
            mine = {e["name"] for e in exercises}
            self._grade_all(sub.id, exercises, {n: w for n, w in found.items() if n in mine}, root, files, result)
        finally:
            _remove(staging)
        result["duration"] = round(time.monotonic() - started, 3)
        return finish(result, {e["name"]: e["max_points"] for e in exercises})

    def _grade_all(self, sub_id: str, exercises: list[dict], found: dict, root: Path, files: list[Path],
                   result: dict) -> None:
        """Every exercise in order; the next check run's copy and child start while one is checked."""
        plan = [(ex, unit) for ex in exercises if ex["name"] in found for unit in self.engine.units(ex["name"])]
        # Starting the next child while one is checked hides its start-up but holds two
        # children in memory; a small container (Gradescope's) turns it off.
        ahead = self.config.get("prestart", True)
        upcoming = self._prepare(plan[0], found, root, files) if plan and ahead else None
        step = 0
        for ex in exercises:
            name = ex["name"]
            seed = derive_seed(self.config["run_seed"], sub_id, name)
            located = found.get(name)
            if located is None:
                entry = not_run(name, scheme=self.scheme, max_points=ex["max_points"], cause="not_submitted",
                                seed=seed, message=f"no file for this exercise (expected exercises/{ex['file']})")
            else:
                runs, failure = [], None
                while step < len(plan) and plan[step][0] is ex:
                    current = upcoming if ahead else self._prepare(plan[step], found, root, files)
                    step += 1
                    upcoming = self._prepare(plan[step], found, root, files) if ahead and step < len(plan) else None
                    if isinstance(current, str):
                        failure = failure or current
                        continue
                    if failure is not None or (runs and runs[-1].cause in ("syntax_error", "import_error")):
                        _close(current)  # the file cannot load: further check runs would only repeat that
                        continue
                    try:
                        prepared, copy = current
                        runs.append(prepared.run(copy / located.relative, seed))
                    except Exception:
                        failure = traceback.format_exc(limit=8)
                    finally:
                        _close(current)
                if failure is not None:
                    # The grader's fault, not the learner's: kept for the instructor.
                    entry = not_run(name, scheme=self.scheme, max_points=ex["max_points"], cause="grader_error",
                                    seed=seed, message=failure, file=located.relative, note=located.note)
                else:
                    units = [u for e, u in plan if e is ex][: len(runs)]
                    entry = exercise_entry(name, scheme=self.scheme, max_points=ex["max_points"], seed=seed,
                                           file=located.relative, note=located.note, **merge(units, runs))
            result["exercises"][name] = entry
            self.emit({"event": "exercise", "submission": sub_id, "exercise": name, "result": entry})
            self.forgetting.after_exercise(lambda: memory()["rss_mb"], _forget_compiled)

    def _prepare(self, step: tuple, found: dict, root: Path, files: list[Path]):
        """A throw-away copy of the submission and a sandboxed child already starting in it.

        A sandboxed child sees only the file it checks (`Sandbox.stage`), so only that file
        is copied there; in the weaker tiers the child runs in the copy, which gets every
        planned file of the submission.
        On failure, the traceback text (a grader error, reported for that exercise).
        """
        ex, unit = step
        copy = Path(tempfile.mkdtemp(dir=self.scratch, prefix="copy-"))
        try:
            _copy_files(root, [found[ex["name"]].path] if self.isolation.sandboxed else files, copy)
            prepared = self.engine.prepare(unit, isolation=self.isolation, slot=self.slot, copy=copy,
                                           compile_cache=self.compile_cache)
        except Exception:
            _remove(copy)
            return traceback.format_exc(limit=8)
        return prepared, copy


def _stop_zygote(zygote) -> None:
    from course.engine.sandbox import use_zygote

    use_zygote(None)
    zygote.close()


class Forgetting:
    """When the worker drops what its checks compiled: once it holds more than `rss_mb`, and
    then only once it has grown by FORGET_STEP_MB past what it held after the last drop.
    What a worker keeps after a drop (its imports, the reference's modules) is not what
    it compiled: dropping again after every exercise would cost 0.15 s each and free
    nothing more. With `rss_mb` 0 (a small container), after every exercise."""

    def __init__(self, rss_mb: float) -> None:
        self.rss_mb = rss_mb
        self.threshold = rss_mb

    def after_exercise(self, rss, forget) -> bool:
        if rss() <= self.threshold:
            return False
        forget()
        if self.rss_mb:
            self.threshold = max(self.rss_mb, rss() + FORGET_STEP_MB)
        return True


def _forget_compiled() -> None:
    """Drop what the checks so far compiled in this process.

    Each check module is imported afresh, so the programs it jitted in the
    trusted parent are never reused; JAX's caches would keep them (and their
    executables) for the worker's life, tens of MB per exercise. It is done
    once the worker holds more than FORGET_RSS_MB, not after every exercise:
    `jax.clear_caches()` costs about 0.15 s, 5 s of every submission of the
    course, and it drops the eager operations the next exercise's checks would
    have reused too. The collection is cheap: what the worker imported at its
    start is frozen (`engine._warm_imports`).
    """
    import gc

    import jax

    jax.clear_caches()
    gc.collect()
    _trim_heap()


def _trim_heap() -> None:
    """Hand the freed heap back to the system (glibc keeps it otherwise, and the worker's
    resident memory would not show what a drop freed)."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc


def _close(current) -> None:
    if current is None or isinstance(current, str):
        return
    prepared, copy = current
    try:
        prepared.close()
    finally:
        _remove(copy)


def copy_plan(root: Path, files: list[Path], exercise_files: list[Path]) -> tuple[list[Path], list[str]]:
    """The files each throw-away copy gets, and the ones left out (with their sizes).

    Exercise files first, then Python files, then the rest smallest first, up to
    MAX_COPY_BYTES in all: a large data file never costs the learner an exercise.
    """
    first = set(exercise_files)
    sizes = {}
    for f in files:
        try:
            sizes[f] = f.stat().st_size
        except OSError:
            continue
    order = sorted(sizes, key=lambda f: (f not in first, f.suffix != ".py", sizes[f], f.as_posix()))
    kept, left_out, total = [], [], 0
    for f in order:
        if total + sizes[f] > MAX_COPY_BYTES:
            left_out.append(f"{f.relative_to(root).as_posix()} ({sizes[f] / 2**20:.1f} MiB)")
            continue
        total += sizes[f]
        kept.append(f)
    return kept, left_out


def _empty_note(root: Path, scan: "Scan") -> str:
    """Why nothing was found, with what was there, so the instructor can tell a wrong layout from nothing."""
    py = [f.relative_to(root).as_posix() for f in scan.files if f.suffix == ".py"]
    note = "no exercise files were found in this submission"
    if py:
        note += f" (its Python files: {', '.join(py[:8])}{', ...' if len(py) > 8 else ''})"
    elif scan.files:
        note += f" ({len(scan.files)} files, none of them Python)"
    if scan.stopped:
        note += f"; the search stopped early: {scan.stopped}"
    return note


def _copy_files(root: Path, files: list[Path], dest: Path) -> None:
    """Copy the planned regular files (never links) into the throw-away copy."""
    for f in files:
        target = dest / f.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, target)


def _remove(path: Path) -> None:
    """Remove a throw-away folder even if graded code made parts of it read-only."""
    def unlock(func, p, _exc):
        try:
            os.chmod(os.path.dirname(p), 0o700)
            os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass

    shutil.rmtree(path, onerror=unlock)


def main() -> int:
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)

    def emit(msg: dict) -> None:
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    try:
        config = json.loads(sys.stdin.readline())
        from course.i18n import set_language

        set_language(config.get("lang"))  # the check messages in the feedback follow the grader's --lang
        from course.engine.compile_flags import adopt

        adopt()  # before anything compiles: the references and the children share the same XLA options
        worker = Worker(config, emit)
    except Exception as exc:
        emit({"event": "fatal", "message": f"{type(exc).__name__}: {exc}", "detail": traceback.format_exc()})
        return 1
    emit({"event": "ready"})
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            job = json.loads(line)
            from course.engine.sandbox import STARTED

            before = dict(STARTED)
            result = worker.grade(job)
            children = {k: STARTED[k] - before[k] for k in STARTED}
            emit({"event": "done", "submission": job["id"], "result": result, "memory": memory(),
                  "children": children})
    finally:
        worker.close()
    return 0


def _start_zygote(isolation: Isolation, config: dict):
    """A zygote the sandboxed children are forked from (`course.engine.zygote`), where it can
    serve: the unshare tier, and a worker that may hold one more process in memory (not a
    small container's, which runs without prestart). JAXLINGS_FORK_CHILDREN=0 turns it off."""
    if (isolation.tier != "unshare" or not config.get("prestart", True)
            or os.environ.get("JAXLINGS_FORK_CHILDREN", "1") == "0"):
        return None
    from course.engine.isolation import INSIDE_HOME, child_env
    from course.engine.sandbox import use_zygote
    from course.engine.zygote import Zygote

    zygote = Zygote(child_env(home=INSIDE_HOME, tmp="/tmp"))
    use_zygote(zygote)
    return zygote


def memory() -> dict:
    """This worker's resident memory now and at its peak, in MiB.

    (Not the children's: a child's peak as the kernel counts it includes the
    worker's own pages at the fork, before the child runs anything.)
    """
    import resource

    rss = 0.0
    try:
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        pass
    return dict(rss_mb=round(rss, 1), peak_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1))


if __name__ == "__main__":
    sys.exit(main())

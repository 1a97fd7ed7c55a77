"""What the sandbox costs per check, for every tier that works here, against a plain child.

- start: a sandboxed `python -c pass` (the launcher and its mounts, no JAX);
- warm: a long-lived CheckSession whose next child was started inside its
  sandbox ahead of time (as `watch` and the app use it), one check of an
  exercise with its reference solution;
- cold: a CheckSession with no warm child: starting the sandboxed child,
  importing JAX in it, then the check (what a one-off `jaxlings check` pays
  on top of its own start-up).

The checks are timed on a real exercise of the course (`mlp_nnx` unless
`--exercise` names others) and on the test fixture's `fx_scale`, whose check
does almost nothing, so that its times are the engine's own.

    .venv/bin/python benchmarks/isolation_cost.py [--runs 5] [--cold-runs 3] [--exercise NAME ...]
        [--tiers process,unshare,...]

Prints medians per tier and exercise, and each tier's cost over `process` (a plain child).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course.catalog import load_catalog  # noqa: E402
from course.engine.isolation import IsolationError, SANDBOX_TIERS, choose  # noqa: E402
from course.engine.runner import CheckSession  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "course"


def start_times(iso, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        box = iso.sandbox()
        try:
            t0 = time.perf_counter()
            subprocess.run(box.command([sys.executable, "-I", "-S", "-c", "pass"]), cwd=box.cwd, env=box.env(),
                           check=True, stdin=subprocess.DEVNULL)
            times.append(time.perf_counter() - t0)
        finally:
            box.close()
    return times


def check_times(iso, exercise, runs: int, *, warm: bool) -> list[float]:
    times = []
    with CheckSession(isolation=iso, warm=warm) as session:
        session.run(exercise, learner_file=exercise.solution_path())  # compiles the reference once
        for _ in range(runs):
            if warm:
                session.wait_warm()
            t0 = time.perf_counter()
            result = session.run(exercise, learner_file=exercise.solution_path())
            times.append(time.perf_counter() - t0)
            assert result.passed, result.message
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--exercise", action="append", metavar="NAME",
                        help="an exercise of the course to time (repeatable; default: mlp_nnx)")
    parser.add_argument("--tiers", default=",".join(("process", *SANDBOX_TIERS)),
                        help="comma-separated isolation tiers to time (default: every one)")
    args = parser.parse_args()
    os.environ.pop("JAXLINGS_WORKSPACE", None)
    course = load_catalog()
    try:
        exercises = [course.exercise(name) for name in (args.exercise or ["mlp_nnx"])]
    except KeyError as exc:
        parser.error(f"no such exercise in the course: {exc}")
    exercises.append(load_catalog(FIXTURE).exercise("fx_scale"))
    tiers = {}
    names = [t for t in args.tiers.split(",") if t]
    unknown = sorted(set(names) - {"process", *SANDBOX_TIERS})
    if unknown:
        parser.error(f"no such tier: {', '.join(unknown)}")
    for name in names:
        try:
            tiers[name] = choose(name)
        except IsolationError as exc:
            print(f"{name}: not available here ({exc})")
    print(f"cpus: {os.cpu_count()}")
    starts, checks = {}, {}
    for name, iso in tiers.items():
        starts[name] = statistics.median(start_times(iso, args.runs))
        print(f"{name:>10}: start {starts[name]:.3f} s (median)")
        for exercise in exercises:
            warm = statistics.median(check_times(iso, exercise, args.runs, warm=True))
            cold = statistics.median(check_times(iso, exercise, args.cold_runs, warm=False))
            checks[name, exercise.name] = (warm, cold)
            print(f"{'':>10}  {exercise.name:<14} warm check {warm:.3f} s, cold check {cold:.3f} s (medians)")
    if "process" not in starts:
        return 0
    for name in starts:
        if name == "process":
            continue
        print(f"{name} over process: start {starts[name] - starts['process']:+.3f} s")
        for exercise in exercises:
            (warm, cold), (bwarm, bcold) = checks[name, exercise.name], checks["process", exercise.name]
            print(f"  {exercise.name:<14} warm {warm / bwarm:.2f}x ({warm - bwarm:+.3f} s), "
                  f"cold {cold / bcold:.2f}x ({cold - bcold:+.3f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

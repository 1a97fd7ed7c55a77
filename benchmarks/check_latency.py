"""Time from "check" to verdict for a simple JAX exercise, warm and cold.

Warm: a long-lived CheckSession (as `jaxlings watch` and the app use), with its
warm child ready before each check, as it is while the learner edits. Cold: a
fresh `python -m course check` process, as a one-off command pays.

    .venv/bin/python benchmarks/check_latency.py [--runs 7] [--cold-runs 3]

Prints medians and the warm/target and cold/warm ratios measured in this run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from course.catalog import load_catalog  # noqa: E402
from course.engine.runner import CheckSession  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "course"
TARGET_S = 1.0


def warm_times(runs: int) -> list[float]:
    exercise = load_catalog(FIXTURE).exercise("fx_scale")
    times = []
    with CheckSession() as session:
        session.run(exercise, learner_file=exercise.solution_path())  # first run: compiles the reference
        for _ in range(runs):
            session.wait_warm()
            t0 = time.perf_counter()
            result = session.run(exercise, learner_file=exercise.solution_path())
            times.append(time.perf_counter() - t0)
            assert result.passed, result.message
    return times


def cold_times(runs: int) -> list[float]:
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(FIXTURE), "JAXLINGS_PROGRESS": os.devnull + ".jaxlings-bench"}
    env.pop("JAXLINGS_WORKSPACE", None)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "course", "check", "fx_scale", "--json"], cwd=REPO, env=env,
                              capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"cold check failed to run:\n{proc.stderr}")
        json.loads(proc.stdout)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cold-runs", type=int, default=3)
    args = parser.parse_args()
    warm = warm_times(args.runs)
    cold = cold_times(args.cold_runs)
    w, c = statistics.median(warm), statistics.median(cold)
    print(f"cpus: {os.cpu_count()}")
    print(f"warm check -> verdict: median {w:.3f} s over {len(warm)} runs "
          f"(min {min(warm):.3f}, max {max(warm):.3f}); target {TARGET_S:.1f} s, ratio {w / TARGET_S:.2f}")
    print(f"cold `jaxlings check` (new process): median {c:.3f} s over {len(cold)} runs; cold/warm {c / w:.1f}x")
    return 0 if w <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""How much the grader itself costs, and how it scales with --jobs.

Builds a class of N synthetic submissions from the reference solutions (every
exercise that has both a solution and a check), grades it with 1 job and with
2 jobs, and prints from the same run:

- the grader's own cost per submission: wall time per submission with 1 job,
  minus the time the engine spent checking that submission's exercises
  (learner children, pytest, the checks themselves). Target: at most 3 s.
- the speed-up of 2 jobs over 1. Target: at least 1.7x.

    .venv/bin/python benchmarks/grade_class.py [--submissions 40] [--exercises a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from course.catalog import load_catalog  # noqa: E402


def gradable(names: list[str] | None) -> list:
    catalog = load_catalog()
    chosen = [e for e in catalog.exercises if e.solution_path().is_file() and e.check_path().is_file()]
    if names:
        chosen = [e for e in chosen if e.name in names]
    return chosen


def make_class(folder: Path, exercises: list, n: int) -> None:
    for i in range(n):
        for e in exercises:
            target = folder / f"learner{i:03d}" / "exercises" / e.file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(e.solution_path(), target)


def run(class_dir: Path, out: Path, exercises: list, jobs: int) -> tuple[float, dict]:
    argv = [sys.executable, "-m", "course", "grade", str(class_dir), "--out", str(out), "--jobs", str(jobs),
            "--exercises", ",".join(e.name for e in exercises), "--seed", "1", "--quiet"]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"grading failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, json.loads((out / "report.json").read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--exercises", help="comma-separated names (default: every exercise with a solution)")
    args = parser.parse_args()
    exercises = gradable(args.exercises.split(",") if args.exercises else None)
    if not exercises:
        sys.exit("no exercise has both a solution and a check yet")
    print(f"{args.submissions} submissions x {len(exercises)} exercises on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="jaxlings-bench-") as tmp:
        class_dir = Path(tmp) / "class"
        make_class(class_dir, exercises, args.submissions)
        wall1, report1 = run(class_dir, Path(tmp) / "out1", exercises, 1)
        wall2, report2 = run(class_dir, Path(tmp) / "out2", exercises, 2)
    subs = report1["submissions"]
    failed = [s["id"] for s in subs if s["total"] != s["max_total"]]
    checking = sum(e["duration"] for s in subs for e in s["exercises"].values()) / len(subs)
    per_sub = wall1 / len(subs)
    overhead = per_sub - checking
    speedup = wall1 / wall2
    print(f"isolation: {report1['run']['isolation']['tier']}")
    print(f"1 job : {wall1:7.1f} s wall, {per_sub:.2f} s per submission, of which checking {checking:.2f} s")
    print(f"2 jobs: {wall2:7.1f} s wall")
    print(f"grader's own cost per submission: {overhead:.2f} s (target <= 3 s)  "
          f"{'PASS' if overhead <= 3 else 'MISS'}")
    print(f"speed-up with 2 jobs: {speedup:.2f}x (target >= 1.7x)  {'PASS' if speedup >= 1.7 else 'MISS'}")
    if failed:
        print(f"warning: {len(failed)} solution submissions did not get full marks, e.g. {failed[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

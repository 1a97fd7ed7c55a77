"""How much the grader itself costs, and how it scales with --jobs.

Builds a class of N synthetic submissions from the reference solutions (every
exercise that has both a solution and a check), grades it with 1 job, with 2
jobs, and as 2 shards joined by `grade merge`, and prints:

- per submission: wall time (median and slowest) and the grading worker's
  peak memory (learner children have their own limit, --memory-mb).
  Targets: the full course in at most 120 s per submission on 2 cores, and a
  worker under 1.5 GB;
- the grader's own overhead per submission: wall time per submission with 1
  job, minus the time the checks report (each exercise's `duration`: learner
  children, pytest, the checks themselves). Target: under 3 s, printed with
  PASS or MISS and the load average. Split into what the worker spends around
  each submission's checks (copies, sandboxes set up and torn down, dropping
  compiled programs; median over the class) and the run's fixed cost shared by
  every submission (the grader and its worker starting, the isolation probe,
  the reports);
- the speed-up of 2 jobs over 1. Target: at least 1.7x;
- the cost of sharding: 2 shards run one after the other plus the merge,
  against one unsharded run with 1 job (each shard starts its own worker);
- for every run: wall time, CPU time (the grader and every process it
  started: as reaped, which misses a sandbox's processes reaped outside the
  tree, and as sampled in the tree, which is the fuller count; and the
  machine's busy time), the load average before and after (a busy machine stretches wall
  time, not CPU time), and the peak memory of the whole process tree: the
  resident memory of the grader, its workers, sandboxes and learner children
  summed at each sample (every 0.1 s; shared pages counted in each process, so
  an upper bound on what a container's memory limit sees).

With --gradescope it grades one submission the way Gradescope's
run_autograder does (`grade --gradescope`, one process tree, one child at a
time) and prints that tree's peak: the memory an autograder container needs.

With --compare-fresh it grades the class with 1 job a second time, every sandboxed child
started afresh instead of forked from the worker's zygote (`course.engine.zygote`), and
prints the ratio of the median submission's time.

With --compare-compile it grades the class with 1 job a second time with XLA's default
CPU options (JAXLINGS_FAST_COMPILE=0; `course.engine.compile_flags`) and prints the
ratio of the median submission's time and of the CPU the process tree used.

    .venv/bin/python benchmarks/grade_class.py [--submissions 40] [--exercises a,b] [--no-shards] [--one-job]
                                               [--compare-fresh] [--compare-compile]
    .venv/bin/python benchmarks/grade_class.py --gradescope [--exercises a,b]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

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


def tree_rss_mb(root: psutil.Process) -> float:
    total = 0
    for p in [root, *root.children(recursive=True)]:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def machine_busy_s() -> float:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat), or nan elsewhere."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return float("nan")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def measured(argv: list[str], label: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `argv`, print its wall and CPU time, the load average and its process tree's peak memory.

    CPU time is counted three ways: what the grader's reaped children report (os.times; a
    sandbox's processes reaped outside the tree are missing), the tree's processes as sampled
    every 0.1 s (short-lived ones partly missed), and the whole machine's busy time, which is
    the grader's own only on an otherwise idle machine."""
    load_before = os.getloadavg()[0]
    cpu_before = os.times()
    busy_before = machine_busy_s()
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=None if env is None else {**os.environ, **env})
    peak = [0.0]
    seen: dict[tuple[int, float], float] = {}
    done = threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        while not done.wait(0.1):
            try:
                peak[0] = max(peak[0], tree_rss_mb(root))
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                return
            for p in procs:
                try:
                    t = p.cpu_times()
                    seen[(p.pid, p.create_time())] = t.user + t.system
                except psutil.Error:
                    pass

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    done.set()
    sampler.join()
    busy = machine_busy_s() - busy_before
    cpu_after = os.times()
    cpu = (cpu_after.children_user - cpu_before.children_user) + (cpu_after.children_system - cpu_before.children_system)
    print(f"[{label}] wall {wall:.1f} s, CPU {cpu:.1f} s reaped / {sum(seen.values()):.1f} s sampled in the tree / "
          f"machine busy {busy:.1f} of {wall * (os.cpu_count() or 1):.1f} CPU-s, load average {load_before:.2f} -> "
          f"{os.getloadavg()[0]:.2f}, peak memory of the process tree {peak[0]:.0f} MiB")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def run(class_dir: Path, out: Path, exercises: list, jobs: int, *extra: str, env: dict | None = None,
        note: str = "") -> tuple[float, dict]:
    argv = [sys.executable, "-m", "course", "grade", str(class_dir), "--out", str(out), "--jobs", str(jobs),
            "--exercises", ",".join(e.name for e in exercises), "--seed", "1", "--quiet", *extra]
    t0 = time.perf_counter()
    proc = measured(argv, f"{jobs} job{'s' if jobs > 1 else ''}{' ' + ' '.join(extra) if extra else ''}{note}", env)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"grading failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, json.loads((out / "report.json").read_text())


def gradescope(exercises: list, tmp: Path) -> int:
    """One submission graded as Gradescope's run_autograder does; the tree's peak is what the container needs."""
    submission = tmp / "submission"
    for e in exercises:
        target = submission / e.file
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(e.solution_path(), target)
    results = tmp / "results" / "results.json"
    argv = [sys.executable, "-m", "course", "grade", "--gradescope", "--submission", str(submission), "--results",
            str(results), "--out", str(tmp / "out"), "--exercises", ",".join(e.name for e in exercises), "--quiet"]
    proc = measured(argv, "gradescope, 1 submission")
    if proc.returncode != 0:
        sys.exit(f"grading failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    doc = json.loads(results.read_text())
    print(f"score {doc['score']} / {doc['max_score']}")
    for test in doc["tests"]:
        if test["status"] != "passed":  # a reference solution that failed: say which, and why
            print(f"  not passed: {test['name']}: {' | '.join(test['output'].splitlines()[:3])[:300]}")
    return 0


def shard_and_merge(class_dir: Path, tmp: Path, exercises: list) -> tuple[list[float], float]:
    shards = []
    for k in (1, 2):
        wall, _ = run(class_dir, tmp / f"shard{k}", exercises, 1, "--shard", f"{k}/2")
        shards.append(wall)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "course", "grade", "merge", str(tmp / "shard1"), str(tmp / "shard2"),
                           "--out", str(tmp / "merged"), "--quiet"], cwd=ROOT, capture_output=True, text=True)
    merge = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"merge failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return shards, merge


def per_submission(subs: list[dict], n_exercises: int) -> None:
    walls = sorted(s["duration"] for s in subs)
    worker = max((s.get("worker", {}).get("peak_mb") or 0) for s in subs)
    print(f"per submission ({n_exercises} exercises, 1 job): median {statistics.median(walls):.1f} s, "
          f"slowest {walls[-1]:.1f} s")
    print(f"peak memory: worker {worker:.0f} MiB (target < 1536 MiB)  {'PASS' if worker < 1536 else 'MISS'}")


def _children(subs: list[dict]) -> str:
    counts = [s.get("worker", {}).get("children") or {} for s in subs]
    forked = statistics.median(c.get("forked", 0) for c in counts)
    fresh = statistics.median(c.get("fresh", 0) for c in counts)
    return f"median {forked:g} forked from a zygote, {fresh:g} started afresh"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=40)
    parser.add_argument("--exercises", help="comma-separated names (default: every exercise with a solution)")
    parser.add_argument("--no-shards", action="store_true", help="skip the shard and merge measurement")
    parser.add_argument("--one-job", action="store_true",
                        help="grade with 1 job only: skip the 2-job run and its speed-up (implies --no-shards)")
    parser.add_argument("--compare-fresh", action="store_true",
                        help="grade with 1 job a second time with every child started afresh "
                             "(JAXLINGS_FORK_CHILDREN=0) and print the ratio")
    parser.add_argument("--compare-compile", action="store_true",
                        help="grade with 1 job a second time with XLA's default CPU options "
                             "(JAXLINGS_FAST_COMPILE=0) and print the ratio")
    parser.add_argument("--gradescope", action="store_true",
                        help="grade one submission as Gradescope does and print its process tree's peak memory")
    args = parser.parse_args()
    exercises = gradable(args.exercises.split(",") if args.exercises else None)
    if not exercises:
        sys.exit("no exercise has both a solution and a check yet")
    if args.gradescope:
        with tempfile.TemporaryDirectory(prefix="jaxlings-bench-") as tmp:
            return gradescope(exercises, Path(tmp))
    print(f"{args.submissions} submissions x {len(exercises)} exercises on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="jaxlings-bench-") as tmp:
        class_dir = Path(tmp) / "class"
        make_class(class_dir, exercises, args.submissions)
        load_start = os.getloadavg()[0]
        wall1, report1 = run(class_dir, Path(tmp) / "out1", exercises, 1)
        load_1job = os.getloadavg()[0]
        fresh = (run(class_dir, Path(tmp) / "out-fresh", exercises, 1, env={"JAXLINGS_FORK_CHILDREN": "0"},
                     note=", children started afresh") if args.compare_fresh else None)
        default_compile = (run(class_dir, Path(tmp) / "out-default-compile", exercises, 1,
                               env={"JAXLINGS_FAST_COMPILE": "0"}, note=", XLA's default CPU options")
                           if args.compare_compile else None)
        two = None if args.one_job else run(class_dir, Path(tmp) / "out2", exercises, 2)
        wall2 = None if two is None else two[0]
        sharded = None if args.no_shards or args.one_job else shard_and_merge(class_dir, Path(tmp), exercises)
    subs = report1["submissions"]
    per_submission(subs, len(exercises))
    failed = [s["id"] for s in subs if s["total"] != s["max_total"]]
    checks = [sum(e["duration"] for e in s["exercises"].values()) for s in subs]
    checking = sum(checks) / len(subs)
    per_sub = wall1 / len(subs)
    overhead = per_sub - checking
    around = statistics.median(s["duration"] - c for s, c in zip(subs, checks))
    fixed = wall1 - sum(s["duration"] for s in subs)
    print(f"isolation: {report1['run']['isolation']['tier']}; sandboxed children per submission: "
          f"{_children(subs)}")
    print(f"1 job : {wall1:7.1f} s wall, {per_sub:.2f} s per submission, of which the checks report {checking:.2f} s")
    print(f"grader's own overhead per submission (1 job): {overhead:.2f} s = {per_sub:.2f} s - {checking:.2f} s; "
          f"target < 3 s: {'PASS' if overhead < 3 else 'MISS'} (load average {load_start:.2f} -> {load_1job:.2f} "
          f"on {os.cpu_count()} cores)")
    print(f"  around each submission's checks in the worker: median {around:.2f} s; the run's fixed cost "
          f"{fixed:.1f} s in all, {fixed / len(subs):.2f} s per submission over {len(subs)}")
    if fresh is not None:
        wall_f, report_f = fresh
        subs_f = report_f["submissions"]
        med, med_f = (statistics.median(s["duration"] for s in x) for x in (subs, subs_f))
        print(f"children started afresh: {wall_f:7.1f} s wall, median {med_f:.1f} s per submission "
              f"({_children(subs_f)}); forked from a zygote: median {med:.1f} s, {med_f / med:.2f}x faster")
    if default_compile is not None:
        wall_d, report_d = default_compile
        subs_d = report_d["submissions"]
        med, med_d = (statistics.median(s["duration"] for s in x) for x in (subs, subs_d))
        print(f"XLA's default CPU options: {wall_d:7.1f} s wall, median {med_d:.1f} s per submission; "
              f"with the check's options (--xla_cpu_use_fusion_emitters=false): median {med:.1f} s, "
              f"{med_d / med:.2f}x faster")
    if wall2 is not None:
        speedup = wall1 / wall2
        subs2 = two[1]["submissions"]
        parts = max(int((s.get("worker") or {}).get("parts") or 1) for s in subs2)
        print(f"2 jobs: {wall2:7.1f} s wall, median {statistics.median(s['duration'] for s in subs2):.1f} s per "
              f"submission" + (f" (each split into {parts} parts, one per exercise, over the 2 workers)" if parts > 1 else ""))
        print(f"speed-up with 2 jobs: {speedup:.2f}x (target >= 1.7x)  {'PASS' if speedup >= 1.7 else 'MISS'}")
    if sharded is not None:
        shards, merge = sharded
        cost = sum(shards) + merge - wall1
        print(f"2 shards one after the other: {' + '.join(f'{t:.1f}' for t in shards)} s, merge {merge:.2f} s; "
              f"shard+merge overhead vs 1 job: {cost:+.1f} s ({cost / wall1:+.0%})")
    if failed:
        print(f"warning: {len(failed)} solution submissions did not get full marks, e.g. {failed[:3]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

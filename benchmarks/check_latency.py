"""Time from "check" to verdict on the real course, warm and one-off.

Every exercise in lessons/course.toml is checked with its reference solution
as the learner's file:

- warm: in one long-lived `CheckSession`, as `jaxlings watch` and the app use
  it (its warm child ready before each check, and the check it ran ahead over,
  as they are while the learner edits; `--no-ahead` runs nothing ahead),
  `--rounds` times per exercise, the exercise opened first on its starter as the
  app does (the first check is run ahead on the starter, then the solution is saved);
- one-off: a fresh `python -m course check NAME --json` process, as a single
  `jaxlings check` pays, for a sample of exercises: through the workspace's
  check server (the default; the first of them starts it), and with the
  server turned off (JAXLINGS_SERVER=0: Python, JAX and the check in one
  process, as before the server). Each is checked twice in a row: the first
  check of that exercise in the workspace (the one the target judges), then
  the same check again, as a learner checks again after an edit.

Both run in a throw-away workspace (a copy of the solutions as exercises/),
so the learner's own files, progress and caches are never touched, and every
cache starts empty: the first round of each exercise pays what a learner's
first check pays.

    .venv/bin/python benchmarks/check_latency.py [--rounds 2] [--cli-sample 5]
        [--exercises a,b,...] [--course ROOT] [--seed N] [--no-footprint] [--warm-window S] [--busy 2]

`--seed` replays the same inputs (and so the same shapes) in every round:
what checks that draw shapes from a small fixed set would gain from the
compilation caches, with the reference's results also reused.

Then the idle footprint of the check server (`idle_footprint.py`) after a
one-off check of the first sampled exercise (`--no-footprint` skips it).

Prints the load average at the start and at the end; per exercise, the median
and the worst of its rounds; then the median, the 90th percentile and the worst
over the course, the median of each exercise's first check (its programs compiled
afresh) beside that of the later ones, and each target with PASS or MISS:

- warm median <= 1.0 s and 90th percentile <= 2.0 s (over every warm check); the first
  checks' median <= 1.5 s and the later checks' median <= 0.6 s;
- every exercise <= 3 s at its worst (train_titanic <= 6 s);
- one-off `jaxlings check` median <= 2.5 s (through the server);
- idle footprint <= 400 MB RSS (server and warm children).

With `--busy N`, everything is measured again while N busy loops run (two on a 2-core
machine), and each figure is printed beside its quiet value with their ratio: a check
must stay within 3x its quiet time.

Exits 0 when every target is met, 1 when one is missed.
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
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from course.catalog import load_catalog  # noqa: E402
from idle_footprint import IDLE_TARGET_MB, measure as measure_footprint  # noqa: E402

WARM_MEDIAN_S = 1.0
WARM_P90_S = 2.0
WARM_EACH_S = 3.0
WARM_EACH_EXCEPTIONS = {"train_titanic": 6.0}  # trains a real model for about 20 epochs
CLI_MEDIAN_S = 2.5
FIRST_MEDIAN_S = 1.5  # the first check of each exercise in a new workspace: its programs compiled afresh
LATER_MEDIAN_S = 0.6  # the checks after it, which find most of their programs in the caches
LOAD_RATIO = 3.0  # under --busy: each figure at most this many times its quiet value
DEFAULT_CLI_SAMPLE = ("functional_ops", "mlp_nnx", "train_step", "scan_epoch", "checkpoint_roundtrip")


def make_workspace(root: Path, exercises, where: Path) -> Path:
    """A workspace whose exercises/ are the reference solutions."""
    for ex in exercises:
        target = where / "exercises" / ex.file
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ex.solution_path(), target)
    return where


def warm_times(exercises, workspace: Path, rounds: int, ahead: bool = True) -> dict[str, list[float]]:
    os.environ["JAXLINGS_WORKSPACE"] = str(workspace)
    from course.engine.runner import CheckSession, workspace_compile_cache
    from course.workspace import pristine_starter

    times: dict[str, list[float]] = {ex.name: [] for ex in exercises}
    failures = []
    with CheckSession(compile_cache=workspace_compile_cache(), run_ahead=ahead) as session:
        for ex in exercises:
            # The app opens the exercise on its starter and runs its first check ahead on that;
            # the learner then writes the solution, and saves.
            mine = workspace / "exercises" / ex.file
            solution = mine.read_bytes()
            mine.write_text(pristine_starter(ex, "en"), encoding="utf-8")
            session.prepare(ex, mine)
            session.wait_warm()
            mine.write_bytes(solution)
            for _ in range(rounds):
                session.wait_warm()
                t0 = time.perf_counter()
                result = session.run(ex)
                times[ex.name].append(time.perf_counter() - t0)
                if not result.passed:
                    failures.append(f"{ex.name}: {result.message}")
            print(f"  warm {ex.name:24s} " + "  ".join(f"{t:6.2f}" for t in times[ex.name]), flush=True)
    for f in failures:
        print(f"warning: the reference failed its own check: {f}", file=sys.stderr)
    return times


def cli_times(names: list[str], workspace: Path, course_root: Path,
              server: bool) -> tuple[dict[str, float], dict[str, float]]:
    """Each exercise checked twice in a row by a fresh `jaxlings check` process: the first check
    of it in this workspace, and the same check again, as a learner checks again after an edit
    (its programs are then in the workspace's compilation caches)."""
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(course_root), "JAXLINGS_WORKSPACE": str(workspace),
           "JAXLINGS_SERVER": "1" if server else "0"}
    env.pop("JAXLINGS_PROGRESS", None)
    label = "server" if server else "no server"
    first, again = {}, {}
    try:
        for name in names:
            for times in (first, again):
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, "-I", "-m", "course", "check", name, "--json"], cwd=workspace,
                                      env=env, capture_output=True, text=True)
                times[name] = time.perf_counter() - t0
                if proc.returncode not in (0, 1):
                    raise SystemExit(f"`jaxlings check {name}` failed to run:\n{proc.stderr[-3000:]}")
                if not json.loads(proc.stdout)["passed"]:
                    print(f"warning: the reference failed its own check in `jaxlings check {name}`", file=sys.stderr)
                if "unavailable" in proc.stderr:
                    print(f"warning: {proc.stderr.strip()}", file=sys.stderr)
            print(f"  one-off check ({label}) {name:24s} {first[name]:6.2f}   again {again[name]:6.2f}", flush=True)
    finally:
        if server:
            subprocess.run([sys.executable, "-c", "from course.engine import server; server.stop()"], env=env,
                           cwd=REPO, capture_output=True)
    return first, again


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile, interpolated between the two nearest ranks (what numpy.percentile gives)."""
    ordered = sorted(values)
    at = (len(ordered) - 1) * q / 100
    low = int(at)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def measure(args, exercises, names, sample) -> dict:
    """One run of every measurement; prints as it goes and returns the figures the targets judge."""
    print(f"cpus: {os.cpu_count()}, load average at the start: {os.getloadavg()[0]:.1f}; "
          f"{len(exercises)} exercises, {args.rounds} warm rounds each"
          + (f"; every check with seed {args.seed}" if args.seed is not None else ""), flush=True)
    with tempfile.TemporaryDirectory(prefix="jaxlings-bench-") as tmp:
        warm_ws = make_workspace(args.course, exercises, Path(tmp) / "warm")
        warm = warm_times(exercises, warm_ws, args.rounds, ahead=not args.no_ahead)
        cli_ws = make_workspace(args.course, exercises, Path(tmp) / "cli")
        cli, cli_again = cli_times(sample, cli_ws, args.course.resolve(), server=True) if sample else ({}, {})
        cold_ws = make_workspace(args.course, exercises, Path(tmp) / "cold")
        cold, cold_again = cli_times(sample, cold_ws, args.course.resolve(), server=False) if sample else ({}, {})
    footprint = None
    if not args.no_footprint:
        print("idle footprint of the check server:", flush=True)
        footprint = measure_footprint((sample or names)[0], args.course.resolve(), warm_window=args.warm_window,
                                      verbose=False)

    print(f"\n{'exercise':24s} {'median':>7s} {'worst':>7s} {'limit':>6s}")
    per_ex = {}
    misses = []
    for name, ts in warm.items():
        med, worst = statistics.median(ts), max(ts)
        limit = WARM_EACH_EXCEPTIONS.get(name, WARM_EACH_S)
        per_ex[name] = med
        flag = "" if worst <= limit else "  MISS"
        if worst > limit:
            misses.append(name)
        print(f"{name:24s} {med:7.2f} {worst:7.2f} {limit:6.1f}{flag}")
    all_times = [t for ts in warm.values() for t in ts]
    course_median = statistics.median(per_ex.values())
    p90 = percentile(all_times, 90)
    slowest = max(warm, key=lambda n: max(warm[n]))
    firsts, later = [ts[0] for ts in warm.values()], [t for ts in warm.values() for t in ts[1:]]
    figures = {"warm median": course_median, "warm p90": p90, "worst": max(all_times),
               "first checks median": statistics.median(firsts)}
    if later:
        figures["later checks median"] = statistics.median(later)
    targets = [("warm median", course_median <= WARM_MEDIAN_S, f"median <= {WARM_MEDIAN_S:.1f} s"),
               ("warm p90", p90 <= WARM_P90_S, f"p90 <= {WARM_P90_S:.1f} s"),
               ("first checks median", figures["first checks median"] <= FIRST_MEDIAN_S,
                f"first checks' median <= {FIRST_MEDIAN_S:.1f} s")]
    if later:
        targets.append(("later checks median", figures["later checks median"] <= LATER_MEDIAN_S,
                        f"later checks' median <= {LATER_MEDIAN_S:.1f} s"))
    targets.append(("every exercise", not misses,
                    f"every exercise <= {WARM_EACH_S:.0f} s (train_titanic <= "
                    f"{WARM_EACH_EXCEPTIONS['train_titanic']:.0f} s)" + (f" ({', '.join(misses)})" if misses else "")))
    print(f"\nwarm check -> verdict: median {course_median:.2f} s over {len(per_ex)} exercises "
          f"({len(all_times)} checks), p90 {p90:.2f} s, worst {max(all_times):.2f} s ({slowest})")
    # The first check of an exercise in a new workspace compiles its programs; later ones read most of
    # them from the workspace's compilation caches (all of them once every shape in the check's set was seen).
    print(f"  first check of each exercise: median {figures['first checks median']:.2f} s"
          + (f"; later checks: median {figures['later checks median']:.2f} s, p90 {percentile(later, 90):.2f} s"
             if later else ""))
    if cli:
        cli_median = statistics.median(cli.values())
        figures["one-off median"] = cli_median
        figures["one-off without the server"] = statistics.median(cold.values())
        targets.append(("one-off median", cli_median <= CLI_MEDIAN_S, f"one-off median <= {CLI_MEDIAN_S:.1f} s"))
        print(f"one-off `jaxlings check`: median {cli_median:.2f} s over {len(cli)} exercises, "
              f"worst {max(cli.values()):.2f} s ({max(cli, key=cli.get)}, the first starts the server); "
              f"one-off/warm {cli_median / course_median:.1f}x")
        print(f"  the same check again: median {statistics.median(cli_again.values()):.2f} s, "
              f"worst {max(cli_again.values()):.2f} s")
        print(f"one-off `jaxlings check` without the server: median {figures['one-off without the server']:.2f} s, "
              f"worst {max(cold.values()):.2f} s ({max(cold, key=cold.get)}); the same check again: median "
              f"{statistics.median(cold_again.values()):.2f} s")
    if footprint is not None:
        figures["idle footprint (MB)"] = footprint["idle"]
        targets.append(("idle footprint (MB)", footprint["idle"] <= IDLE_TARGET_MB,
                        f"idle footprint <= {IDLE_TARGET_MB:.0f} MB"))
        print(f"check server: {footprint['warm']:.0f} MB RSS warm after a one-off check, "
              f"{footprint['idle']:.0f} MB once idle")
    for _key, ok, label in targets:
        print(f"  target: {label}: {verdict(ok)}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}", flush=True)
    return {"figures": figures, "ok": all(ok for _k, ok, _l in targets)}


def busy_loops(n: int) -> list[subprocess.Popen]:
    """`n` processes that keep a core each busy, as other work on a learner's machine does."""
    return [subprocess.Popen([sys.executable, "-I", "-c", "while True: pass"]) for _ in range(n)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="warm checks per exercise")
    parser.add_argument("--cli-sample", type=int, default=len(DEFAULT_CLI_SAMPLE),
                        help="how many exercises get a one-off `jaxlings check` (0: none)")
    parser.add_argument("--exercises", default="", help="comma-separated names (default: the whole course)")
    parser.add_argument("--course", type=Path, default=REPO, help="course root (default: this repository)")
    parser.add_argument("--seed", type=int, default=None, help="the same seed for every check (default: fresh)")
    parser.add_argument("--no-footprint", action="store_true", help="skip the idle footprint of the server")
    parser.add_argument("--warm-window", type=float, default=30.0,
                        help="JAXLINGS_SERVER_WARM for the footprint's server: seconds before it cools (default 30)")
    parser.add_argument("--no-ahead", action="store_true",
                        help="warm checks without running each exercise's next check ahead (the app and "
                             "the server run ahead)")
    parser.add_argument("--busy", type=int, default=0,
                        help="then measure it all again under this many busy loops, and print each figure's "
                             "ratio to the quiet run (2 on a 2-core machine: load about 4 with the checks)")
    args = parser.parse_args()
    if args.seed is not None:
        os.environ["JAXLINGS_SEED"] = str(args.seed)

    catalog = load_catalog(args.course.resolve())
    exercises = list(catalog.exercises)
    if args.exercises:
        wanted = [n.strip() for n in args.exercises.split(",") if n.strip()]
        exercises = [catalog.exercise(n) for n in wanted]
    names = [ex.name for ex in exercises]
    sample = [n for n in DEFAULT_CLI_SAMPLE if n in names] + [n for n in names if n not in DEFAULT_CLI_SAMPLE]
    sample = sample[: max(0, args.cli_sample)]

    quiet = measure(args, exercises, names, sample)
    if not args.busy:
        return 0 if quiet["ok"] else 1
    print(f"\n== the same, under {args.busy} busy loop(s)", flush=True)
    loops = busy_loops(args.busy)
    try:
        loaded = measure(args, exercises, names, sample)
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    print(f"\n{'figure':28s} {'quiet':>8s} {'busy':>8s} {'ratio':>6s}  (target under load: ratio <= "
          f"{LOAD_RATIO:.0f})")
    within = True
    for key, value in quiet["figures"].items():
        other = loaded["figures"].get(key)
        if other is None:
            continue
        ratio = other / value if value else float("nan")
        if "MB" not in key:
            within = within and ratio <= LOAD_RATIO
        print(f"{key:28s} {value:8.2f} {other:8.2f} {ratio:6.2f}")
    print(f"  target: every time under load <= {LOAD_RATIO:.0f}x its quiet time: {verdict(within)}")
    return 0 if quiet["ok"] and within else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Where a check's time goes, part by part, on the real course.

Every exercise in lessons/course.toml is checked with its reference solution as
the learner's file, in one long-lived `CheckSession` (as `watch`, the app and the
check server use it), `--rounds` times each, in a throw-away workspace whose
caches start empty. Each check's wall time is split into:

- wait:      waiting for a learner child that was not ready yet (start, import of JAX);
- import:    the learner's file imported in its child (the "load" request);
- learner:   the check's requests to the learner's child (call, probe, has), which
             include what the child traces, lowers and compiles:
             - c.xla:  XLA compiles in the child (count, seconds), from JAX's own log;
             - hits:   how many of those came from the learner's persistent cache;
             - c.low:  lowering to MLIR in the child (seconds);
- eval:      requests to the evaluator process (parse, compile, run learner programs;
             count, seconds);
- ref:       the reference solution's answers (here or in its trusted child), with
             how many came from the session's result cache;
- t.xla:     XLA compiles in this (trusted) process, the reference's and the check's
             own (count, seconds; inside `ref` and `other`), and how many programs came
             from its persistent cache (hits);
- other:     the rest: pytest collecting and running the check module, the check's own
             NumPy, drawing inputs, the wire. Requests run side by side
             (`checking.side_by_side`) overlap, so this can read low.

    .venv/bin/python benchmarks/check_profile.py [--rounds 2] [--exercises a,b]
        [--tests] [--json FILE]

While it runs, each round prints its wall time and (compiles in the learner's child / of
them from its cache, compiles here). `--tests` adds a row per test of each check. Figures are medians over the rounds,
except the first-round column, which is what a learner's first check pays. The
load average is printed at the start and the end: compare profiles from one run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_latency import make_workspace  # noqa: E402
from course.catalog import load_catalog  # noqa: E402

PARTS = ("wait", "import", "learner", "eval", "ref", "other")
# JAX_LOG_COMPILES lines, as JAX 0.10-0.12 write them.
_XLA = re.compile(r"Finished XLA compilation of .*? in ([0-9.e-]+) sec")
_LOWER = re.compile(r"Finished jaxpr to MLIR module conversion .*? in ([0-9.e-]+) sec")
_HIT = "Persistent compilation cache hit"


class Profiler:
    """Wraps the engine's doorways (in this process only) and adds up what each costs."""

    def __init__(self) -> None:
        self.local = threading.local()
        self.lock = threading.Lock()
        self.test = ""
        self.rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))

    def add(self, key: str, seconds: float, count: int = 1) -> None:
        if threading.current_thread().name == "jaxlings-run-ahead":
            return  # what a check run ahead costs is paid while the learner edits
        with self.lock:
            row = self.rows[self.test]
            row[key] += seconds
            row[key + "#"] += count

    def take(self) -> dict[str, dict[str, float]]:
        with self.lock:
            rows, self.rows = self.rows, defaultdict(lambda: defaultdict(float))
        return {t: dict(r) for t, r in rows.items()}

    def install(self) -> None:
        import jax

        from course.engine import evaluator, sandbox

        try:
            from course.engine import check_run
        except ImportError:  # a checkout from before the runner was split: the same classes in runner
            from course.engine import runner as check_run

        prof = self

        def timed(cls, name, key_of):
            original = getattr(cls, name)

            def wrapper(self_, *a, **k):
                key = key_of(self_, *a, **k)
                if key is None:
                    return original(self_, *a, **k)
                t0 = time.perf_counter()
                try:
                    return original(self_, *a, **k)
                finally:
                    prof.add(key, time.perf_counter() - t0)
            setattr(cls, name, wrapper)

        def learner_key(proc, msg, *a, **k):
            if getattr(prof.local, "reference", False):
                return None
            return "import" if msg.get("op") == "load" else "learner"

        def wait_key(proc, *a, **k):
            return None if proc.ready or getattr(prof.local, "reference", False) else "wait"

        timed(sandbox.LearnerProcess, "request", learner_key)
        timed(sandbox.LearnerProcess, "wait_ready", wait_key)
        timed(evaluator.Evaluator, "call", lambda *a, **k: "eval")
        timed(check_run.ReferenceProxy, "_answer", lambda *a, **k: "ref")

        send = check_run.ChildReferenceProxy._send

        def child_reference(self_, msg):
            prof.local.reference = True
            t0 = time.perf_counter()
            try:
                return send(self_, msg)
            finally:
                prof.local.reference = False
                prof.add("ref", time.perf_counter() - t0)
        check_run.ChildReferenceProxy._send = child_reference

        begin = check_run._Run.begin_test

        def begin_test(self_, name):
            prof.test = name
            return begin(self_, name)
        check_run._Run.begin_test = begin_test

        # What the learner's child compiles: JAX logs it on the child's stderr, read here as it comes.
        drain = sandbox.LearnerProcess._drain_stderr

        def drain_counting(self_):
            stream = self_.proc.stderr
            read = stream.read
            pending = [b""]

            def counting_read(n):
                chunk = read(n)
                if chunk:
                    lines = (pending[0] + chunk).split(b"\n")
                    pending[0] = lines.pop()
                    for line in lines:
                        text = line.decode("utf-8", "replace")
                        if (m := _XLA.search(text)):
                            prof.add("c.xla", float(m.group(1)))
                        elif (m := _LOWER.search(text)):
                            prof.add("c.low", float(m.group(1)))
                        elif _HIT in text:
                            prof.add("c.hit", 0.0)
                return chunk
            stream.read = counting_read
            return drain(self_)
        sandbox.LearnerProcess._drain_stderr = drain_counting

        def trusted_compile(event, duration, **_):
            if event == "/jax/core/compile/backend_compile_duration":
                prof.add("t.xla", duration)
            elif event == "/jax/compilation_cache/cache_retrieval_time_sec":
                prof.add("t.hit", duration)
        jax.monitoring.register_event_duration_secs_listener(trusted_compile)
        # JAX_LOG_COMPILES is for the children, which inherit it; this process counts its own above.
        jax.config.update("jax_log_compiles", False)


def summarise(tests: dict[str, dict[str, float]], wall: float) -> dict[str, float]:
    total: dict[str, float] = defaultdict(float)
    for row in tests.values():
        for k, v in row.items():
            total[k] += v
    out = {"wall": wall, **{p: total.get(p, 0.0) for p in PARTS[:-1]}}
    out["other"] = max(0.0, wall - sum(out[p] for p in PARTS[:-1]))
    for k in ("c.xla", "c.low", "t.xla"):
        out[k] = total.get(k, 0.0)
    for k in ("learner#", "eval#", "ref#", "c.xla#", "t.xla#", "c.hit#", "t.hit#"):
        out[k] = total.get(k, 0.0)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--exercises", default="", help="comma-separated names (default: the whole course)")
    parser.add_argument("--tests", action="store_true", help="a row per test of each check too")
    parser.add_argument("--json", type=Path, help="write every round's figures there")
    parser.add_argument("--ahead", action="store_true",
                        help="run each next check ahead, as the app does (the run ahead itself is not profiled)")
    args = parser.parse_args()

    catalog = load_catalog(REPO)
    exercises = list(catalog.exercises)
    if args.exercises:
        exercises = [catalog.exercise(n.strip()) for n in args.exercises.split(",") if n.strip()]
    os.environ["JAX_LOG_COMPILES"] = "1"  # the children inherit it (JAX_* passes into a sandbox)
    print(f"cpus: {os.cpu_count()}, load average at the start: {os.getloadavg()[0]:.1f}; "
          f"{len(exercises)} exercises, {args.rounds} rounds each", flush=True)
    prof = Profiler()
    rounds: dict[str, list[dict]] = {}
    per_test: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="jaxlings-profile-") as tmp:
        workspace = make_workspace(REPO, exercises, Path(tmp) / "ws")
        os.environ["JAXLINGS_WORKSPACE"] = str(workspace)
        from course.engine.runner import CheckSession, workspace_compile_cache

        with CheckSession(compile_cache=workspace_compile_cache(), run_ahead=args.ahead) as session:
            prof.install()
            for ex in exercises:
                rounds[ex.name] = []
                for r in range(args.rounds):
                    session.wait_warm()
                    prof.take()  # what the run ahead cost is not the check's
                    t0 = time.perf_counter()
                    result = session.run(ex)
                    wall = time.perf_counter() - t0
                    tests = prof.take()
                    if not result.passed:
                        print(f"warning: {ex.name}: the reference failed its own check: {result.message[:300]}",
                              file=sys.stderr)
                    rounds[ex.name].append(summarise(tests, wall))
                    if r == args.rounds - 1:
                        per_test[ex.name] = {t: {**row, "wall": next((c.duration for c in result.checks
                                                                        if c.name == t), 0.0)}
                                             for t, row in tests.items()}
                print(f"  {ex.name:24s} " + "  ".join(
                    f"{x['wall']:6.2f} ({x['c.xla#']:.0f}/{x['c.hit#']:.0f}, {x['t.xla#']:.0f})" for x in rounds[ex.name]),
                    flush=True)

    head = (f"{'exercise':22s} {'first':>6s} {'wall':>6s} {'wait':>5s} {'imp':>5s} {'lrn':>5s} {'c.xla':>10s} "
            f"{'hits':>4s} {'c.low':>5s} {'eval':>10s} {'ref':>5s} {'t.xla':>10s} {'hits':>4s} {'other':>5s}")

    def line(name: str, rows: list[dict], first: float | None) -> str:
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        return (f"{name[:22]:22s} {(f'{first:6.2f}' if first is not None else ''):>6s} {med['wall']:6.2f} "
                f"{med['wait']:5.2f} {med['import']:5.2f} {med['learner']:5.2f} "
                f"{med['c.xla#']:4.0f}/{med['c.xla']:5.2f} {med['c.hit#']:4.0f} {med['c.low']:5.2f} "
                f"{med['eval#']:4.0f}/{med['eval']:5.2f} {med['ref']:5.2f} {med['t.xla#']:4.0f}/{med['t.xla']:5.2f} "
                f"{med['t.hit#']:4.0f} {med['other']:5.2f}")

    print("\nseconds, median over the rounds (first: the first round's wall); n/s = count/seconds")
    print(head)
    order = sorted(rounds, key=lambda n: -statistics.median(r["wall"] for r in rounds[n]))
    for name in order:
        print(line(name, rounds[name], rounds[name][0]["wall"]))
        if args.tests:
            for test, row in per_test[name].items():
                print(line("  " + test, [summarise({test: row}, row["wall"])], None))
    every = [r for rs in rounds.values() for r in rs]
    wall = sum(r["wall"] for r in every)
    print(f"\nover the course ({len(every)} checks, {wall:.1f} s in all), share of the wall time:")
    for part in PARTS:
        print(f"  {part:8s} {sum(r[part] for r in every) / wall:6.1%}")
    for k, label in (("c.xla", "XLA compiles in learner children"), ("c.low", "lowering in learner children"),
                     ("t.xla", "XLA compiles in this process"), ("eval", "evaluator requests")):
        count = sum(r.get(k + "#", 0) for r in every)
        print(f"  {label}: {sum(r[k] for r in every) / wall:6.1%}" + (f" ({count:.0f})" if count else ""))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    if args.json:
        args.json.write_text(json.dumps({"rounds": rounds, "tests": per_test}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

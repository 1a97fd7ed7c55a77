"""How long `jaxlings` takes to show its first screen, and to show the course on it.

Each run starts a fresh Python process (as a learner's `jaxlings` does) that
runs the app headless; the process prints, as seconds since the parent started
it, when the first screen is painted and when the course map is filled in.
Target: first frame well under 1 s. Prints the median of several runs, and
whether jax/torch/the check runner were imported before the first frame
(they must not be: they cost seconds).

    .venv/bin/python benchmarks/tui_startup.py [--runs 7]
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

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import os, sys, time, json
t0 = float(os.environ["TUI_BENCH_T0"])
from course.tui.app import JaxlingsApp

marks = {}

async def probe(pilot):
    # auto_pilot runs once the first screen has been composed and painted.
    marks["first_frame"] = time.time() - t0
    marks["heavy_before_first_frame"] = sorted(
        m for m in ("jax", "torch", "course.engine.runner") if m in sys.modules)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    assert pilot.app.catalog is not None
    marks["course_shown"] = time.time() - t0
    pilot.app.exit()

JaxlingsApp().run(headless=True, size=(100, 30), auto_pilot=probe)
print("BENCH " + json.dumps(marks))
"""


def one_run() -> dict:
    env = dict(os.environ, TUI_BENCH_T0=repr(time.time()))
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    for line in out.stdout.splitlines():
        if line.startswith("BENCH "):
            return json.loads(line[6:])
    raise SystemExit(f"the app did not start:\n{out.stdout}\n{out.stderr}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    one_run()  # warm the OS file cache and .pyc files, as on any second launch
    runs = [one_run() for _ in range(args.runs)]
    first = statistics.median(r["first_frame"] for r in runs)
    shown = statistics.median(r["course_shown"] for r in runs)
    heavy = sorted({m for r in runs for m in r["heavy_before_first_frame"]})
    print(f"runs: {args.runs}")
    print(f"first frame:        median {first * 1000:.0f} ms  (min {min(r['first_frame'] for r in runs) * 1000:.0f}, "
          f"max {max(r['first_frame'] for r in runs) * 1000:.0f})")
    print(f"course map filled:  median {shown * 1000:.0f} ms")
    print(f"first frame / 1 s target: {first / 1.0:.2f}")
    print(f"heavy modules imported before the first frame: {', '.join(heavy) or 'none'}")
    return 0 if first < 1.0 and not heavy else 1


if __name__ == "__main__":
    sys.exit(main())

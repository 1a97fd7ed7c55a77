"""Every case of the real course on many seeds: the checks that a lucky draw can fool.

The test suite runs each case of tests/test_attacks.py and tests/test_exercises.py on one
seed of its own, the same in every run (tests/conftest.py, `case_seed`), so that its verdicts
never depend on the draw. A check's inputs are drawn from the seed, and a mistake that only
shows on some inputs (no gradient beyond the clipping limit, no row that mixes zeros and
nonzeros) passes on the draws that miss it. This runs each case on `--seeds` fresh seeds:

- every attack of tests/attacks/<exercise>/ must fail (cheats and near misses), for a
  learner's cause, never `check_error`; `delegate_*` cases only where the checks run in a
  sandbox (elsewhere the child can read the course's folders, as tests/test_attacks.py says);
- every alternative of tests/alternatives/ and the reference solution must pass.

Each wrong verdict is printed with its seed, which `JAXLINGS_SEED=<seed>` replays:

    JAXLINGS_SEED=<seed> .venv/bin/python -m pytest tests/test_attacks.py -k "<exercise>-<case>"

    .venv/bin/python benchmarks/check_seeds.py [--seeds 3] [--exercises a,b,...] [--first-seed N]

One warm check session serves every case, as in the suite. Prints the load average, the
number of runs and their median time, then every wrong verdict. Exits 0 when there is none,
1 when there is one.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TESTS = REPO / "tests"


def cases(exercise, root: Path, sandboxed: bool) -> list[tuple[Path, bool]]:
    """(learner file, should it pass) for one exercise."""
    attacks = [p for p in sorted((TESTS / "attacks" / exercise.name).glob("*.py"))
               if sandboxed or not p.stem.startswith("delegate_")]
    alternatives = TESTS / "alternatives"
    passing = [alternatives / f"{exercise.name}.py", *sorted(alternatives.glob(f"{exercise.name}__*.py")),
               *sorted((alternatives / exercise.name).glob("*.py")), root / "solutions" / exercise.file]
    return [(p, False) for p in attacks] + [(p, True) for p in passing if p.is_file()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per case (default 3)")
    parser.add_argument("--exercises", default="", help="comma-separated names (default: the whole course)")
    parser.add_argument("--first-seed", type=int, default=None,
                        help="draw the seeds from this one (default: fresh every run)")
    args = parser.parse_args(argv)

    from course.catalog import load_catalog
    from course.engine.caches import workspace_compile_cache
    from course.engine.runner import CheckSession

    catalog = load_catalog()
    exercises = list(catalog.exercises)
    if args.exercises:
        exercises = [catalog.exercise(n.strip()) for n in args.exercises.split(",") if n.strip()]
    draw = random.Random(args.first_seed)
    print(f"load average at the start: {os.getloadavg()[0]:.2f}; {len(exercises)} exercises, "
          f"{args.seeds} seeds per case", flush=True)
    wrong: list[str] = []
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="jaxlings-seeds-") as tmp, \
            CheckSession(compile_cache=workspace_compile_cache(Path(tmp) / ".jaxlings")) as session:
        sandboxed = bool(getattr(session.isolation, "sandboxed", False))
        for ex in exercises:
            for path, should_pass in cases(ex, catalog.root, sandboxed):
                for _ in range(args.seeds):
                    seed = draw.randrange(2**31)
                    start = time.monotonic()
                    result = session.run(ex, learner_file=path, seed=seed, first_failure=not should_pass)
                    times.append(time.monotonic() - start)
                    if result.passed == should_pass and result.cause != "check_error":
                        continue
                    what = "passes" if result.passed else f"fails ({result.cause})"
                    line = f"WRONG {ex.name} {path.relative_to(REPO)} {what} on JAXLINGS_SEED={seed}"
                    if not result.passed:
                        line += "\n    " + result.message.strip().replace("\n", "\n    ")
                    print(line, flush=True)
                    wrong.append(line)
            print(f"  {ex.name}: done", flush=True)
    print(f"\n{len(times)} runs, median {statistics.median(times):.2f} s; "
          f"load average at the end: {os.getloadavg()[0]:.2f}")
    print(f"wrong verdicts: {len(wrong)}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

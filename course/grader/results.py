"""The per-submission result dict: built in the worker, written by the pool, read by reports.

Shape (JSON-ready):

    {"id", "source", "fingerprint", "status": graded|empty|unreadable|unsupported|interrupted,
     "total", "max_total", "duration", "notes": [...],
     "exercises": {name: {"exercise", "passed", "points", "max_points", "cause",
                          "message", "seed", "duration", "file", "note",
                          "output" (the tail of what the learner's code printed: for the instructor),
                          "checks": [{"name", "outcome", "cause", "message",
                                      "duration", "points", "max_points"}]}}}
"""

from __future__ import annotations

from fractions import Fraction

from course.grader.scoring import Scheme, exact


def exercise_entry(
    name: str, *, scheme: Scheme, max_points: float, passed: bool, cause: str | None, message: str,
    seed: int | None, duration: float, checks: list[dict], file: str | None = None, note: str | None = None,
    output: str = "",
) -> dict:
    checks = [dict(c) for c in checks]
    earned, worth = scheme.score(name, max_points, checks, passed)
    for check, w in zip(checks, worth):
        got = None if w is None else (w if check["outcome"] == "passed" else Fraction(0))
        check["max_points"] = None if w is None else float(w)
        check["points"] = None if got is None else float(got)
        check["points_exact"] = None if got is None else str(got)
    return dict(exercise=name, passed=bool(passed), points=float(earned), points_exact=str(earned),
                max_points=max_points, cause=cause,
                message=message or "", seed=seed, duration=round(duration, 3), file=file, note=note,
                checks=checks, output=output)


def not_run(name: str, *, scheme: Scheme, max_points: float, cause: str, message: str,
            seed: int | None = None, file: str | None = None, note: str | None = None) -> dict:
    return exercise_entry(name, scheme=scheme, max_points=max_points, passed=False, cause=cause,
                          message=message, seed=seed, duration=0.0, checks=[], file=file, note=note)


def finish(sub: dict, max_points: dict[str, float]) -> dict:
    """Fill in totals, summed exactly; every exercise asked for counts toward the maximum."""
    total = sum((exact_points(e) for e in sub["exercises"].values()), Fraction(0))
    sub["total"] = float(total)
    sub["total_exact"] = str(total)
    sub["max_total"] = float(sum((exact(m) for m in max_points.values()), Fraction(0)))
    return sub


def exact_points(entry: dict) -> Fraction:
    """An exercise's points as the exact fraction it was scored as."""
    if entry.get("points_exact"):
        return Fraction(entry["points_exact"])
    return exact(entry["points"])

"""The per-submission result dict: built in the worker, written by the pool, read by reports.

Shape (JSON-ready):

    {"id", "source", "fingerprint", "status": graded|empty|unreadable|interrupted,
     "total", "max_total", "duration", "notes": [...],
     "exercises": {name: {"exercise", "passed", "points", "max_points", "cause",
                          "message", "seed", "duration", "file", "note",
                          "output" (the tail of what the learner's code printed: for the instructor),
                          "checks": [{"name", "outcome", "cause", "message",
                                      "duration", "points", "max_points"}]}}}
"""

from __future__ import annotations

from course.grader.scoring import Scheme


def exercise_entry(
    name: str, *, scheme: Scheme, max_points: float, passed: bool, cause: str | None, message: str,
    seed: int | None, duration: float, checks: list[dict], file: str | None = None, note: str | None = None,
    output: str = "",
) -> dict:
    checks = [dict(c) for c in checks]
    earned, worth = scheme.score(name, max_points, checks, passed)
    for check, w in zip(checks, worth):
        check["max_points"] = w
        check["points"] = None if w is None else (w if check["outcome"] == "passed" else 0.0)
    return dict(exercise=name, passed=bool(passed), points=earned, max_points=max_points, cause=cause,
                message=message or "", seed=seed, duration=round(duration, 3), file=file, note=note,
                checks=checks, output=output)


def not_run(name: str, *, scheme: Scheme, max_points: float, cause: str, message: str,
            seed: int | None = None, file: str | None = None, note: str | None = None) -> dict:
    return exercise_entry(name, scheme=scheme, max_points=max_points, passed=False, cause=cause,
                          message=message, seed=seed, duration=0.0, checks=[], file=file, note=note)


def finish(sub: dict, max_points: dict[str, float]) -> dict:
    """Fill in totals; every exercise asked for counts toward the maximum."""
    sub["total"] = round(sum(e["points"] for e in sub["exercises"].values()), 6)
    sub["max_total"] = round(sum(max_points.values()), 6)
    return sub

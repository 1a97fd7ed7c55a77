"""Points and seeds: pure functions of the results, so a regrade gives the same grades.

By default an exercise is all-or-nothing: its points (the manifest's `points`,
or the instructor's points file) when every check passed, else 0. With partial
credit the exercise's points are split over its checks in proportion to each
check's weight (1 unless the points file says otherwise). Either way an
exercise's maximum is its points, whatever happened to the checks, so every
row of the gradebook has the same maximum.

Points file (TOML):

    [exercises]
    functional_ops = 2
    [checks]
    "functional_ops::test_matches_reference" = 3   # weight, with --partial
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

_PARAMS = re.compile(r"\[.*\]$")


class PointsError(Exception):
    """The points file is wrong; the message says where."""


@dataclass(frozen=True)
class Scheme:
    exercise_points: dict[str, float] = field(default_factory=dict)
    check_weights: dict[str, float] = field(default_factory=dict)  # "exercise::test_name"
    partial: bool = False

    def points_for(self, exercise: str, manifest_points: float) -> float:
        return float(self.exercise_points.get(exercise, manifest_points))

    def score(
        self, exercise: str, max_points: float, checks: list[dict], passed: bool
    ) -> tuple[Fraction, list[Fraction | None]]:
        """(points earned, points each check is worth), exactly, for one exercise's results.

        Fractions, not floats: a third of a point three times is exactly one
        point, so a full score equals the maximum. Rounding is for display only.
        All-or-nothing exercises give their checks no points of their own (None).
        """
        top = exact(max_points)
        if not self.partial or not checks:
            return (top if passed else Fraction(0)), [None] * len(checks)
        weights = [exact(self.check_weights.get(f"{exercise}::{_PARAMS.sub('', c['name'])}", 1.0)) for c in checks]
        total = sum(weights, Fraction(0))
        worth = [top * w / total if total else Fraction(0) for w in weights]
        earned = sum((p for p, c in zip(worth, checks) if c["outcome"] == "passed"), Fraction(0))
        if not passed and earned >= top:
            earned = Fraction(0)  # the engine said fail for a reason outside any one check
        return earned, worth


def exact(x: float | int | str | Fraction) -> Fraction:
    """A point value as the decimal the instructor wrote: 0.1 is 1/10, not the float nearest to it."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, float):
        return Fraction(repr(x))
    return Fraction(x)


def load_scheme(path: Path | None, *, partial: bool, known: set[str]) -> Scheme:
    if path is None:
        return Scheme(partial=partial)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PointsError(f"cannot read the points file {path}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PointsError(f"{path} is not valid TOML: {exc}") from None
    unknown_tables = set(data) - {"exercises", "checks"}
    if unknown_tables:
        raise PointsError(f"{path}: unknown table(s) {sorted(unknown_tables)}; use [exercises] and [checks]")
    exercises = _numbers(data.get("exercises", {}), path, "exercises")
    checks = _numbers(data.get("checks", {}), path, "checks")
    for name in exercises:
        if name not in known:
            raise PointsError(f"{path}: [exercises] names {name!r}, which is not an exercise of this course")
    for key in checks:
        ex, sep, test = key.partition("::")
        if not sep or not test.startswith("test"):
            raise PointsError(f"{path}: [checks] key {key!r} must look like \"exercise::test_name\"")
        if ex not in known:
            raise PointsError(f"{path}: [checks] key {key!r} names {ex!r}, which is not an exercise of this course")
    return Scheme(exercises, checks, partial or bool(checks))


def _numbers(table, path: Path, name: str) -> dict[str, float]:
    if not isinstance(table, dict):
        raise PointsError(f"{path}: [{name}] must be a table")
    out = {}
    for key, value in table.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise PointsError(f"{path}: [{name}] {key} = {value!r}; points must be a number >= 0")
        out[key] = float(value)
    return out


def derive_seed(run_seed: int, submission: str, exercise: str) -> int:
    """The check seed for one exercise of one submission: recorded, reproducible, unguessable."""
    digest = hashlib.sha256(f"{run_seed}/{submission}/{exercise}".encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF

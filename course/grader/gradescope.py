"""Gradescope's results.json for one graded submission.

Fields follow Gradescope's autograder specification: top-level `score`,
`max_score`, `execution_time`, `output`, `visibility`, `stdout_visibility`,
`tests[]`; each test has `name`, `number`, `score`, `max_score`, `status`
("passed"/"failed"), `output` and `visibility`. With partial credit each check
is a test; otherwise each exercise is one test whose output lists its checks.
"""

from __future__ import annotations

import json

from course.grader import safe
from course.grader.reports import CAUSE_TEXT, fmt_points, learner_message, rerun_line

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


def results_json(sub: dict, secrets: list[str], *, visibility: str = "visible", partial: bool = False) -> str:
    sub = safe.clean(sub)
    tests = []
    for name, ex in sub.get("exercises", {}).items():
        if partial and ex["checks"]:
            first = len(tests)
            for check in ex["checks"]:
                tests.append(dict(
                    name=f"{name}: {check['name']}",
                    score=check["points"] or 0.0,
                    max_score=check["max_points"] or 0.0,
                    status="passed" if check["outcome"] == "passed" else "failed",
                    output=_output(check, check["outcome"] == "passed", secrets),
                    visibility=visibility,
                ))
            _sum_exactly(tests[first:], "max_score", ex["max_points"])
            _sum_exactly(tests[first:], "score", ex["points"])
        else:
            lines = [_output(ex, ex["passed"], secrets)] if not ex["checks"] else []
            for check in ex["checks"]:
                lines.append(f"{check['name']}: {check['outcome']}")
                if check["outcome"] != "passed":
                    lines.append(learner_message(check, secrets))
            lines.append(rerun_line(name, ex))
            tests.append(dict(
                name=name,
                score=ex["points"],
                max_score=ex["max_points"],
                status="passed" if ex["passed"] else "failed",
                output="\n".join(x for x in lines if x),
                visibility=visibility,
            ))
    for i, test in enumerate(tests, 1):
        test["number"] = str(i)
    _sum_exactly(tests, "max_score", sub["max_total"])  # only where the exercises' own sums did not add up
    _sum_exactly(tests, "score", sub["total"])
    notes = "\n".join(sub.get("notes", []))
    doc = {
        "score": sub["total"],
        "max_score": sub["max_total"],
        "execution_time": round(sub.get("duration", 0.0), 3),
        "output": (f"Score: {fmt_points(sub['total'])} / {fmt_points(sub['max_total'])}" + (f"\n{notes}" if notes else "")),
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
    }
    return json.dumps(safe.clean(doc), indent=2, ensure_ascii=False) + "\n"


def not_graded_json(message: str, *, visibility: str = "visible") -> str:
    """results.json for a submission the grader refused to grade: no tests, a score of 0 the
    output explains as the platform's doing, never the learner's."""
    doc = {"score": 0.0, "output": message, "visibility": visibility, "stdout_visibility": "hidden", "tests": []}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _sum_exactly(tests: list[dict], key: str, total: float) -> None:
    """Make the tests' `key` values add up, in floating point and in order, to exactly `total`.

    A point split in ten is ten 0.1s, which a platform summing floats makes 0.9999999999999999:
    the largest of the values takes up the difference (far below the displayed precision)."""
    if not tests:
        return
    values = [float(t[key] or 0.0) for t in tests]
    biggest = max(range(len(values)), key=lambda i: values[i])
    for _ in range(4):
        running = 0.0
        for v in values:
            running += v
        if running == total or abs(total - running) > 1e-9 * max(1.0, abs(total)):
            break  # exact, or apart for a reason of its own (not rounding): left as it is
        values[biggest] += total - running
    for test, v in zip(tests, values):
        test[key] = v


def _output(item: dict, passed: bool, secrets: list[str]) -> str:
    if passed:
        return ""
    cause = item.get("cause")
    head = CAUSE_TEXT.get(cause, cause or "failed")
    msg = learner_message(item, secrets)
    return f"{head}\n{msg}".strip()


# Gradescope ends an autograder run at its time limit (40 minutes at most) and
# keeps whatever results.json holds then. jaxlings stops a little before, so
# the last exercises are reported as not reached rather than lost.
PLATFORM_MAX_S = 40 * 60
SUBMISSION_BUDGET_S = 35 * 60
# What grading the full course needs: the worker (JAX, pytest, the reference)
# plus a learner child and the next one starting. Below this the container
# runs out of memory and the learner gets nothing useful.
NEEDED_MB = 3072
WORKER_RESERVE_MB = 1280
PRESTART_MB = 4096  # below this, learner children start one at a time (slower, one child less in memory)
# Below this, one grading worker; from it, one per core, each taking the submission's exercises
# as it comes free (course.grader.pool.split): two workers' trees peaked at 4100 MiB on the course.
SPLIT_MB = 8192


def container_memory_mb() -> int | None:
    """The container's memory limit (cgroup v2, then v1), or None when there is none."""
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = open(path).read().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:
            return int(text) // 2**20
    return None


class ProgressiveResults:
    """results.json rewritten (atomically) as each exercise is settled.

    Before the first exercise it already holds a 0 with every exercise "not
    reached", so a submission that hangs or is killed by the platform still
    shows what happened and how far grading got.
    """

    def __init__(self, path, secrets: list[str], *, visibility: str, partial: bool, note: str = "") -> None:
        self.path, self.secrets, self.visibility, self.partial, self.note = path, secrets, visibility, partial, note
        self.points: dict[str, float] = {}
        self.done: dict[str, dict] = {}

    def start(self, run: dict) -> None:
        self.points = dict(run["points"])
        self.partial = bool(run["partial"])
        self._write()

    def exercise(self, msg: dict) -> None:
        self.done[msg["exercise"]] = msg["result"]
        self._write()

    def _write(self) -> None:
        from course.grader.reports import write_atomic
        from course.grader.results import finish

        exercises = {}
        for name, top in self.points.items():
            exercises[name] = self.done.get(name) or dict(
                exercise=name, passed=False, points=0.0, points_exact="0", max_points=top, cause="not_reached",
                message="grading stopped before this exercise (the time or memory limit of the autograder)",
                seed=None, duration=0.0, file=None, note=None, checks=[], output="")
        sub = finish(dict(id="submission", status="graded", exercises=exercises, duration=0.0,
                          notes=[n for n in (self.note, "Grading in progress or stopped early.") if n]), self.points)
        write_atomic(self.path, results_json(sub, self.secrets, visibility=self.visibility, partial=self.partial))

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
            for check in ex["checks"]:
                tests.append(dict(
                    name=f"{name}: {check['name']}",
                    score=check["points"] or 0.0,
                    max_score=check["max_points"] or 0.0,
                    status="passed" if check["outcome"] == "passed" else "failed",
                    output=_output(check, check["outcome"] == "passed", secrets),
                    visibility=visibility,
                ))
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


def _output(item: dict, passed: bool, secrets: list[str]) -> str:
    if passed:
        return ""
    cause = item.get("cause")
    head = CAUSE_TEXT.get(cause, cause or "failed")
    msg = learner_message(item, secrets)
    return f"{head}\n{msg}".strip()

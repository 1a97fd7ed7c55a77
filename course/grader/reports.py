"""The grading run's outputs: JSON report, CSV gradebook, JUnit XML, feedback text.

All of them are built from the same per-submission result dicts (see
`course.grader.results`), in the trusted grader process, after graded code has
finished: nothing here reads anything a learner wrote except through those dicts.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from course.grader import safe
from course.i18n import N_, _

# Causes that mean "the code ran and gave a wrong answer" are JUnit failures;
# the rest (it crashed, hung, ran out of memory, or the check broke) are errors.
FAILURE_CAUSES = {"wrong_result", "no_result", "not_plain_data", "missing_name", "signature", "not_submitted"}
# In English in the machine-readable reports; the console and the feedback files translate them.
CAUSE_TEXT = {
    "syntax_error": N_("syntax error"),
    "import_error": N_("import failed"),
    "missing_name": N_("a required name is missing"),
    "signature": N_("wrong function signature"),
    "exception": N_("raised an exception"),
    "timeout": N_("ran out of time"),
    "out_of_memory": N_("ran out of memory"),
    "crash": N_("crashed"),
    "exit": N_("exited instead of returning"),
    "not_plain_data": N_("returned something that is not plain data"),
    "wrong_result": N_("wrong result"),
    "no_result": N_("no result"),
    "check_error": N_("the check itself failed (not your fault)"),
    "not_submitted": N_("not submitted"),
    "grader_error": N_("the grader failed (not your fault)"),
    "not_reached": N_("not reached: grading stopped before this exercise"),
    "channel_closed": N_("closed the check's channel to its process"),
    "too_many_processes": N_("started too many processes"),
}
# A check's outcome (pytest's words), the same way: English in the reports, translated in the feedback.
OUTCOME_TEXT = {"passed": N_("passed"), "failed": N_("failed"), "error": N_("error"), "skipped": N_("skipped")}
_GRADER_SIDE = {"check_error", "grader_error"}
MAX_MESSAGE = 2000


def write_atomic(path: Path, text: str) -> None:
    """Write-temp-then-rename, so a killed run never leaves half a file behind."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def sanitize(message: str | None, secrets: list[str]) -> str:
    """A check message fit for a learner: no check source, no paths into the hidden course."""
    if not message:
        return ""
    kept = []
    for line in safe.text(message).splitlines():
        if any(s and s in line for s in secrets):
            continue
        # pytest echoes the check's source with a leading ">" and locations as
        # "file.py:12: ..."; both would show hidden check code.
        if line.startswith(">") or re.match(r"^\s*\S+\.py:\d+:", line):
            continue
        kept.append(line)
    text = "\n".join(kept).strip()
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + "\n... (message shortened)"
    return text


def learner_message(item: dict, secrets: list[str]) -> str:
    if item.get("cause") in _GRADER_SIDE:
        return "This check could not run properly; your instructor will see the details. It is not your fault."
    return sanitize(item.get("message"), secrets)


def fmt_points(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:g}" if abs(x - round(x)) < 1e-9 else f"{x:.2f}"


# ---------------------------------------------------------------- JSON


def report_json(run: dict, submissions: list[dict]) -> str:
    doc = {
        "format_version": 1,
        "run": run,
        "max_points": run["max_points"],
        "submissions": submissions,
    }
    return json.dumps(safe.clean(doc), indent=2, sort_keys=False, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------- CSV


def gradebook_csv(exercises: list[str], submissions: list[dict]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([safe.csv_cell(c) for c in ("submission", "total", "max", "status", *exercises)])
    for sub in submissions:
        per = sub.get("exercises", {})
        w.writerow([
            safe.csv_cell(sub["id"]), fmt_points(sub["total"]), fmt_points(sub["max_total"]),
            safe.csv_cell(sub["status"]),
            *(fmt_points(per[e]["points"]) if e in per else "" for e in exercises),
        ])
    return buf.getvalue()


# ---------------------------------------------------------------- JUnit XML


def junit_xml(submissions: list[dict], secrets: list[str]) -> str:
    """One testsuite per submission, one testcase per check (per exercise when none ran).

    Messages are the learner's version: CI logs are often visible to learners.
    """
    submissions = safe.clean(submissions)
    root = ET.Element("testsuites", name="jaxlings")
    totals = dict(tests=0, failures=0, errors=0, time=0.0)
    for sub in submissions:
        suite = ET.SubElement(root, "testsuite", name=sub["id"])
        props = ET.SubElement(suite, "properties")
        for key in ("total", "max_total", "status"):
            ET.SubElement(props, "property", name=key, value=str(sub[key]))
        counts = dict(tests=0, failures=0, errors=0, time=0.0)
        for name, ex in sub.get("exercises", {}).items():
            cases = ex["checks"] or [dict(name=name, outcome="passed" if ex["passed"] else "failed",
                                          cause=ex.get("cause"), message=ex.get("message"),
                                          duration=ex.get("duration", 0.0))]
            for check in cases:
                case = ET.SubElement(suite, "testcase", classname=f"{sub['id']}.{name}",
                                     name=check["name"], time=f"{check.get('duration') or 0.0:.3f}")
                counts["tests"] += 1
                counts["time"] += check.get("duration") or 0.0
                if check["outcome"] == "passed":
                    continue
                cause = check.get("cause") or ex.get("cause") or "wrong_result"
                tag = "failure" if cause in FAILURE_CAUSES else "error"
                counts["failures" if tag == "failure" else "errors"] += 1
                el = ET.SubElement(case, tag, type=cause, message=CAUSE_TEXT.get(cause, cause))
                el.text = learner_message(check, secrets)
        # The submission's own time, where it is known: the sum of its checks' times leaves out
        # what came between them, and counts twice those a split submission ran side by side.
        if isinstance(sub.get("duration"), (int, float)) and sub["duration"] > 0:
            counts["time"] = float(sub["duration"])
        for k, v in counts.items():
            suite.set(k, f"{v:.3f}" if k == "time" else str(v))
            totals[k] += v
    for k, v in totals.items():
        root.set(k, f"{v:.3f}" if k == "time" else str(v))
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------- feedback


def feedback_text(sub: dict, secrets: list[str]) -> str:
    """What a learner may read: scores, causes and check messages, never check code.

    In the course language the grader runs in (`--lang`): the marks, causes and outcomes are
    translated; check and exercise names stay as the machine-readable reports have them."""
    sub = safe.clean(sub)
    lines = [_("jaxlings feedback for {id}").format(id=sub['id']),
             _("Score: {points} / {total}").format(points=fmt_points(sub['total']),
                                                    total=fmt_points(sub['max_total'])), ""]
    for note in sub.get("notes", []):
        lines.append(_("Note: {note}").format(note=note))
    if sub.get("notes"):
        lines.append("")
    for name, ex in sub.get("exercises", {}).items():
        mark = _("PASS") if ex["passed"] else _("FAIL")
        head = f"[{mark}] {name}  {fmt_points(ex['points'])}/{fmt_points(ex['max_points'])}"
        if not ex["passed"] and ex.get("cause"):
            cause = CAUSE_TEXT.get(ex["cause"])
            head += f"  ({_(cause) if cause else ex['cause']})"
        lines.append(head)
        if ex.get("note"):
            lines.append(f"    {ex['note']}")
        if not ex["checks"] and not ex["passed"]:
            msg = learner_message(ex, secrets)
            lines += [f"    {m}" for m in msg.splitlines()]
        for check in ex["checks"]:
            pts = "" if check.get("max_points") is None else \
                f"  {fmt_points(check['points'])}/{fmt_points(check['max_points'])}"
            outcome = OUTCOME_TEXT.get(check["outcome"])
            lines.append(f"  - {check['name']}: {_(outcome) if outcome else check['outcome']}{pts}")
            if check["outcome"] != "passed":
                msg = learner_message(check, secrets)
                lines += [f"      {m}" for m in msg.splitlines()]
        rerun = rerun_line(name, ex)
        if rerun:
            lines.append(f"    {rerun}")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def rerun_line(name: str, ex: dict) -> str:
    """How the learner replays a failed exercise with the very inputs it was graded on."""
    if ex["passed"] or ex.get("seed") is None or ex.get("cause") in ("not_submitted", *_GRADER_SIDE):
        return ""
    return _("Seed {seed}. Rerun with the same inputs: JAXLINGS_SEED={seed} jaxlings check {name}").format(
        seed=ex["seed"], name=name)

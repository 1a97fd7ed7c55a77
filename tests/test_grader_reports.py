"""Reports read back by real consumers: junitparser, csv, Gradescope's documented fields."""

from __future__ import annotations

import csv
import io
import json

import pytest
from junitparser import Error, Failure, JUnitXml

from course.grader.gradescope import results_json
from course.grader.reports import feedback_text, gradebook_csv, junit_xml
from course.grader.results import exercise_entry, finish, not_run
from course.grader.scoring import PointsError, Scheme, derive_seed, load_scheme

SECRET = "/course/checks"
LEAKY = (f"expected 3.0, got 2.0\n>       assert got == want\n{SECRET}/test_add.py:12: AssertionError\n"
         "(seed 7: rerun with JAXLINGS_SEED=7)")


def _checks(*outcomes):
    return [dict(name=f"test_{i}", outcome=o, cause=None if o == "passed" else "wrong_result",
                 message="" if o == "passed" else LEAKY, duration=0.5) for i, o in enumerate(outcomes)]


def _submission(scheme: Scheme) -> dict:
    exercises = {
        "add": exercise_entry("add", scheme=scheme, max_points=2.0, passed=True, cause=None, message="",
                              seed=1, duration=1.0, checks=_checks("passed", "passed")),
        "scale": exercise_entry("scale", scheme=scheme, max_points=2.0, passed=False, cause="wrong_result",
                                message=LEAKY, seed=2, duration=1.0, checks=_checks("passed", "failed")),
        "loop": exercise_entry("loop", scheme=scheme, max_points=1.0, passed=False, cause="timeout",
                               message="your code took too long", seed=3, duration=9.0,
                               checks=[dict(name="test_loop", outcome="failed", cause="timeout",
                                            message="your code took too long", duration=9.0)]),
        "gone": not_run("gone", scheme=scheme, max_points=1.0, cause="not_submitted",
                        message="no file for this exercise"),
    }
    sub = dict(id="alice", source="alice.zip", fingerprint="x", status="graded", notes=[], exercises=exercises,
               duration=11.0)
    return finish(sub, {k: v["max_points"] for k, v in exercises.items()})


def test_all_or_nothing_and_partial_credit():
    strict = _submission(Scheme())
    assert (strict["total"], strict["max_total"]) == (2.0, 6.0)
    partial = _submission(Scheme(partial=True))
    assert partial["total"] == 3.0  # add 2 + half of scale
    assert [c["points"] for c in partial["exercises"]["scale"]["checks"]] == [1.0, 0.0]


def test_check_weights_split_the_exercise_points(tmp_path):
    f = tmp_path / "points.toml"
    f.write_text('[exercises]\nscale = 4\n[checks]\n"scale::test_0" = 3\n')
    scheme = load_scheme(f, partial=False, known={"add", "scale"})
    assert scheme.partial and scheme.points_for("scale", 1) == 4.0
    earned, worth = scheme.score("scale", 4.0, _checks("passed", "failed"), passed=False)
    assert (earned, worth) == (3.0, [3.0, 1.0])


@pytest.mark.parametrize("text, match", [
    ("[exercises]\nnope = 1\n", "not an exercise"),
    ("[exercises]\nadd = -1\n", "number >= 0"),
    ("[checks]\nadd = 1\n", "exercise::test_name"),
    ("[grades]\n", "unknown table"),
    ("[exercises\n", "not valid TOML"),
])
def test_bad_points_files_say_what_is_wrong(tmp_path, text, match):
    f = tmp_path / "points.toml"
    f.write_text(text)
    with pytest.raises(PointsError, match=match):
        load_scheme(f, partial=False, known={"add"})


def test_seeds_are_reproducible_and_distinct():
    assert derive_seed(5, "alice", "add") == derive_seed(5, "alice", "add")
    assert len({derive_seed(5, s, e) for s in ("alice", "bob") for e in ("add", "scale")}) == 4
    assert derive_seed(6, "alice", "add") != derive_seed(5, "alice", "add")


def test_junit_xml_reads_back_with_junitparser(tmp_path):
    path = tmp_path / "junit.xml"
    path.write_text(junit_xml([_submission(Scheme())], [SECRET]))
    xml = JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert [s.name for s in suites] == ["alice"]
    cases = {(c.classname, c.name): c for c in suites[0]}
    assert len(cases) == 6  # 2 + 2 + 1 checks, and one case for the exercise that never ran
    assert cases[("alice.add", "test_0")].is_passed
    failed = cases[("alice.scale", "test_1")].result[0]
    assert isinstance(failed, Failure) and failed.type == "wrong_result"
    assert "expected 3.0" in failed.text and SECRET not in failed.text and "assert got" not in failed.text
    assert isinstance(cases[("alice.loop", "test_loop")].result[0], Error)
    assert cases[("alice.gone", "gone")].result[0].type == "not_submitted"
    assert (suites[0].tests, suites[0].failures, suites[0].errors) == (6, 2, 1)


def test_gradebook_has_one_row_per_submission():
    rows = list(csv.DictReader(io.StringIO(gradebook_csv(["add", "scale", "loop", "gone"],
                                                         [_submission(Scheme())]))))
    assert rows == [dict(submission="alice", total="2", max="6", status="graded", add="2", scale="0",
                         loop="0", gone="0")]


def test_feedback_shows_messages_but_no_check_code():
    text = feedback_text(_submission(Scheme()), [SECRET])
    assert "Score: 2 / 6" in text and "[FAIL] scale" in text and "expected 3.0, got 2.0" in text
    assert SECRET not in text and "assert got == want" not in text
    assert "JAXLINGS_SEED=7" in text


def test_grader_side_failures_are_not_blamed_on_the_learner():
    sub = _submission(Scheme())
    sub["exercises"]["gone"] = not_run("gone", scheme=Scheme(), max_points=1.0, cause="grader_error",
                                       message='Traceback ... File "/course/checks/test_gone.py"')
    text = feedback_text(finish(sub, {k: v["max_points"] for k, v in sub["exercises"].items()}), [SECRET])
    assert "not your fault" in text and "Traceback" not in text


@pytest.mark.parametrize("partial", [False, True])
def test_gradescope_results_have_the_documented_fields(partial):
    sub = _submission(Scheme(partial=partial))
    doc = json.loads(results_json(sub, [SECRET], visibility="after_due_date", partial=partial))
    assert doc["score"] == sub["total"] and doc["max_score"] == 6.0
    assert isinstance(doc["execution_time"], (int, float)) and isinstance(doc["output"], str)
    assert doc["visibility"] == "after_due_date" and doc["stdout_visibility"] in ("hidden", "visible")
    for test in doc["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in ("passed", "failed") and 0 <= test["score"] <= test["max_score"]
        assert SECRET not in test["output"] and "assert got" not in test["output"]
    assert sum(t["score"] for t in doc["tests"]) == pytest.approx(doc["score"])
    assert sum(t["max_score"] for t in doc["tests"]) == pytest.approx(doc["max_score"])


def test_lone_surrogates_and_control_characters_cannot_break_any_report(tmp_path):
    import xml.etree.ElementTree as ET

    sub = _submission(Scheme())
    hostile = "boom \ud800 \x00 \x1b[2J \x9b \u202e end"
    sub["id"] = "=HYPERLINK(1)"
    sub["notes"] = [hostile]
    sub["exercises"]["scale"]["checks"][1]["message"] = hostile
    sub["exercises"]["scale"]["message"] = hostile
    path = tmp_path / "junit.xml"
    path.write_text(junit_xml([sub], [SECRET]), encoding="utf-8")
    ET.parse(path)
    for text in (junit_xml([sub], [SECRET]), feedback_text(sub, [SECRET]), results_json(sub, [SECRET]),
                 gradebook_csv(["add"], [sub])):
        text.encode("utf-8")
        assert not any(c in text for c in "\x00\x1b\x9b\u202e"), text
    assert "\\x1b[2J" in feedback_text(sub, [SECRET])
    assert next(csv.reader(io.StringIO(gradebook_csv(["add"], [sub]).splitlines()[1])))[0] == "'=HYPERLINK(1)"


def test_partial_credit_is_exact_a_full_score_equals_the_maximum(tmp_path):
    f = tmp_path / "points.toml"
    f.write_text('[exercises]\nscale = 1\nadd = 0.1\n[checks]\n"scale::test_0" = 1\n"scale::test_1" = 1\n'
                 '"scale::test_2" = 1\n"add::test_0" = 7\n')
    scheme = load_scheme(f, partial=True, known={"add", "scale"})
    exercises = {}
    for name, n in (("scale", 3), ("add", 7)):
        exercises[name] = exercise_entry(name, scheme=scheme, max_points=scheme.points_for(name, 1), passed=True,
                                         cause=None, message="", seed=1, duration=0.1,
                                         checks=_checks(*["passed"] * n))
    sub = finish(dict(id="x", exercises=exercises), {k: v["max_points"] for k, v in exercises.items()})
    assert sub["total"] == sub["max_total"] == 1.1
    assert exercises["scale"]["points"] == 1.0
    from fractions import Fraction
    assert sum(Fraction(c["points_exact"]) for c in exercises["scale"]["checks"]) == 1
    doc = json.loads(results_json(sub, [], partial=True))
    assert doc["score"] == doc["max_score"] == 1.1


def test_gradescope_results_are_written_before_and_after_each_exercise(tmp_path):
    from course.grader.gradescope import ProgressiveResults

    path = tmp_path / "results" / "results.json"
    progress = ProgressiveResults(path, [SECRET], visibility="visible", partial=False, note="small container")
    progress.start(dict(points={"add": 2.0, "scale": 1.0}, partial=False))
    doc = json.loads(path.read_text())
    assert doc["score"] == 0 and doc["max_score"] == 3.0 and "small container" in doc["output"]
    assert [t["status"] for t in doc["tests"]] == ["failed", "failed"]
    assert all("not reached" in t["output"] for t in doc["tests"])
    done = _submission(Scheme())["exercises"]["add"]
    progress.exercise(dict(event="exercise", submission="submission", exercise="add", result=done))
    doc = json.loads(path.read_text())
    assert doc["score"] == 2.0 and doc["tests"][0]["status"] == "passed" and "not reached" in doc["tests"][1]["output"]
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]  # no temporary file left behind


def test_feedback_in_japanese_says_marks_and_outcomes_in_japanese_and_the_reports_stay_english():
    from course import i18n

    sub = _submission(Scheme())
    sub["exercises"]["add"]["checks"][1]["outcome"] = "skipped"
    sub["exercises"]["loop"]["checks"][0]["outcome"] = "error"
    i18n.set_language("ja")
    text = feedback_text(sub, [SECRET])
    assert "[合格] add" in text and "[不合格] scale" in text
    assert "  - test_0: 合格" in text and "  - test_1: 失敗" in text
    assert "  - test_1: スキップ" in text and "  - test_loop: エラー" in text
    for english in ("PASS", "FAIL", ": passed", ": failed", ": error", ": skipped"):
        assert english not in text, english
    # The machine-readable reports keep their English words.
    assert 'type="wrong_result"' in junit_xml([sub], [SECRET])
    assert "graded" in gradebook_csv(["add", "scale", "loop", "gone"], [sub])
    assert json.loads(results_json(sub, [SECRET]))["tests"][0]["status"] == "passed"

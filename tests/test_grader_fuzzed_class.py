"""A fuzzed class: random bytes in exception messages, printed output, file and folder names.

One learner must not be able to break or abuse the class's reports. Every
output must parse with a strict reader (UTF-8, JSON, CSV, XML 1.0, JUnit,
Gradescope's results.json) and carry no raw control character, no lone
surrogate and no spreadsheet formula, whatever the learners wrote.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from junitparser import JUnitXml

from test_grader_class import SOLUTIONS, grade

SEED = 2718
EX = "exercises/01_basics/"
# What no output may contain raw: C0 controls but tab and newline, DEL, C1, surrogates.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
ALPHABET = (["\ud800", "\udfff", "\x00", "\x1b", "\x1b[2J", "\x9b31m", "\x07", "\r", "\x0b", "\ufffe", "\u202e",
             "]]>", "<x/>", "&amp;", '"', "'", ",", "\n", "=cmd|' /C calc'!A0", "é", "😀", "\t"]
            + [chr(c) for c in range(0x20, 0x7f)])


def hostile_text(rng: random.Random, n: int = 40) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(n))


def hostile_name(rng: random.Random) -> bytes:
    """A file name as raw bytes: anything but / and NUL, often not UTF-8."""
    return bytes(rng.choice([b for b in range(1, 256) if b != ord("/")]) for _ in range(rng.randint(3, 12)))


def make_fuzzed_class(class_dir: Path, rng: random.Random) -> None:
    sol_add, sol_scale = (SOLUTIONS / "add.py").read_text(), (SOLUTIONS / "scale.py").read_text()
    for i in range(3):
        raiser = (f"import sys\nsys.stdout.write({hostile_text(rng)!r})\n"
                  f"sys.stdout.buffer.write({os.urandom(64)!r})\nsys.stdout.flush()\n"
                  f"def add(a, b):\n    print({hostile_text(rng)!r})\n"
                  f"    raise ValueError({hostile_text(rng)!r})\n")
        wrong = f"def scale(x, factor):\n    print({hostile_text(rng)!r})\n    return x + factor\n"
        folder = os.fsencode(class_dir) + b"/" + [b"+SUM(1+1)", b"@cmd", b"-2+3"][i] + hostile_name(rng)
        os.makedirs(folder + b"/exercises/01_basics")
        with open(folder + b"/exercises/01_basics/add.py", "w") as f:
            f.write(raiser)
        with open(folder + b"/exercises/01_basics/scale.py", "w") as f:
            f.write(wrong if i else sol_scale)
        with open(folder + b"/" + hostile_name(rng), "wb") as f:
            f.write(os.urandom(100))
    # Exercise files in a folder whose name is not UTF-8, in a folder and in a tar.
    odd = os.fsencode(class_dir) + b"/odd-folder/hw\xff\xfe" + hostile_name(rng)
    os.makedirs(odd)
    for name, body in ((b"add.py", sol_add), (b"scale.py", wrong)):
        with open(odd + b"/" + name, "w") as f:
            f.write(body)
    # A data file larger than the copy limit, sorting before the exercises.
    big = class_dir / "bigdata"
    (big / EX).mkdir(parents=True)
    (big / EX / "add.py").write_text(sol_add)
    (big / EX / "scale.py").write_text(sol_scale)
    with open(big / "aaa_data.bin", "wb") as f:
        f.truncate(70 * 1024 * 1024)  # sparse: 70 MiB by its size, nothing on the disk
    with tarfile.open(class_dir / "tarred.tar", "w", format=tarfile.GNU_FORMAT) as tf:
        for name, data in [(EX + "add.py", sol_add.encode()),
                           (os.fsdecode(b"hw\xff/" + hostile_name(rng) + b"/scale.py"), sol_scale.encode()),
                           (os.fsdecode(b"notes-" + hostile_name(rng)), os.urandom(50))]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def strict_text(path: Path) -> str:
    text = path.read_bytes().decode("utf-8")  # strict: a lone surrogate or bad byte fails here
    assert not RAW_CONTROL.search(text), (path.name, RAW_CONTROL.search(text))
    return text


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    rng = random.Random(SEED)
    base = tmp_path_factory.mktemp("fuzz")
    class_dir, out = base / "class", base / "out"
    class_dir.mkdir()
    make_fuzzed_class(class_dir, rng)
    proc = grade(str(class_dir), "--out", str(out), "--jobs", "2", "--seed", "5", "--memory-mb", "2048")
    return dict(proc=proc, out=out, class_dir=class_dir)


def test_the_run_finishes_and_every_learner_is_graded(fuzzed):
    assert fuzzed["proc"].returncode == 0, fuzzed["proc"].stderr[-3000:]
    report = json.loads(strict_text(fuzzed["out"] / "report.json"))
    subs = {s["id"]: s for s in report["submissions"]}
    assert len(subs) == 6
    assert subs["tarred"]["total"] == 3.0, subs["tarred"]
    assert subs["bigdata"]["total"] == 3.0, subs["bigdata"]
    assert any("aaa_data.bin (70.0 MiB)" in n for n in subs["bigdata"]["notes"]), subs["bigdata"]["notes"]
    assert subs["odd-folder"]["total"] == 2.0, subs["odd-folder"]
    assert "\\xff\\xfe" in subs["odd-folder"]["exercises"]["add"]["note"]
    for ident, sub in subs.items():
        if ident not in ("tarred", "odd-folder", "bigdata"):
            assert sub["exercises"]["add"]["cause"] == "exception"


def test_every_output_parses_strictly_and_holds_no_control_characters(fuzzed):
    out = fuzzed["out"]
    json.loads(strict_text(out / "report.json"))
    for f in (out / "submissions").glob("*.json"):
        json.loads(strict_text(f))
    ET.fromstring(strict_text(out / "junit.xml").encode())
    xml = JUnitXml.fromfile(str(out / "junit.xml"))
    assert len(list(xml)) == 6
    feedback = sorted((out / "feedback").glob("*.txt"))
    assert len(feedback) == 6
    for f in feedback:
        strict_text(f)
    proc = fuzzed["proc"]
    for stream in (proc.stdout, proc.stderr):
        assert not RAW_CONTROL.search(stream), RAW_CONTROL.search(stream)


def test_the_gradebook_has_no_formula_cells(fuzzed):
    rows = list(csv.reader(io.StringIO(strict_text(fuzzed["out"] / "gradebook.csv"))))
    assert len(rows) == 7 and all(len(r) == len(rows[0]) for r in rows)
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    assert {r[0][:2] for r in rows[1:] if r[0] not in ("tarred", "odd-folder", "bigdata")} == {"'+", "'@", "'-"}


def test_feedback_names_the_seed_and_the_rerun_command(fuzzed):
    report = json.loads((fuzzed["out"] / "report.json").read_text())
    sub = next(s for s in report["submissions"] if s["id"] not in ("tarred", "odd-folder", "bigdata"))
    text = (fuzzed["out"] / "feedback" / f"{sub['id']}.txt").read_text()
    seed = sub["exercises"]["add"]["seed"]
    assert f"JAXLINGS_SEED={seed} jaxlings check add" in text


def test_gradescope_results_json_survives_a_hostile_submission(tmp_path):
    rng = random.Random(SEED + 1)
    submission = tmp_path / "autograder" / "submission"
    submission.mkdir(parents=True)
    (submission / "add.py").write_text(f"def add(a, b):\n    print({hostile_text(rng)!r})\n"
                                       f"    raise ValueError({hostile_text(rng)!r} + '\\ud800\\x00\\x1b[2J')\n")
    (submission / "scale.py").write_text("def scale(x, factor):\n    return x + factor\n")
    with open(os.fsencode(submission) + b"/" + hostile_name(rng), "wb") as f:
        f.write(b"data")
    results = tmp_path / "autograder" / "results" / "results.json"
    proc = grade("--gradescope", "--submission", str(submission), "--results", str(results),
                 "--isolation", "process", "--i-understand", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(strict_text(results))
    assert doc["score"] == 0 and {t["status"] for t in doc["tests"]} == {"failed"}
    assert "\\ud800" in json.dumps(doc) or "\\\\ud800" in json.dumps(doc)

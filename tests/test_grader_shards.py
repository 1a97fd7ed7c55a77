"""Shards: `--shard K/N` grades a fixed part of the class; `grade merge` joins the parts.

Three shards merged must give exactly what one unsharded run gives with the
same --seed (every report, byte for byte where nothing time-dependent is in
it), and a merge of a set that overlaps, has a gap or mixes runs is refused.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from course.grader.batch import shard_of
from test_grader_class import SOLUTIONS, WRONG_SCALE, grade

SEED = 99
EX = "exercises/01_basics/"
LEARNERS = ["ana", "ben", "cho", "dev", "eli", "fay", "gus"]


def make_class(class_dir: Path) -> None:
    sol = {n: (SOLUTIONS / f"{n}.py").read_text() for n in ("add", "scale")}
    for i, who in enumerate(LEARNERS):
        folder = class_dir / who / EX
        folder.mkdir(parents=True)
        (folder / "add.py").write_text(sol["add"] if i % 3 else "def add(a, b):\n    return a - b\n")
        if i % 4:
            (folder / "scale.py").write_text(sol["scale"] if i % 2 else WRONG_SCALE)
    (class_dir / "hal.7z").write_bytes(b"7z")


def _timeless(report: dict) -> list[dict]:
    subs = []
    for sub in report["submissions"]:
        sub = {k: v for k, v in sub.items() if k not in ("duration", "worker")}
        for ex in sub["exercises"].values():
            ex.pop("duration")
            for c in ex["checks"]:
                c.pop("duration")
        subs.append(sub)
    return subs


def _junit(path: Path) -> str:
    return re.sub(r' time="[0-9.]+"', "", path.read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("shards")
    class_dir = base / "class"
    make_class(class_dir)
    common = ("--seed", str(SEED), "--jobs", "1", "--quiet", "--memory-mb", "2048")
    whole = grade(str(class_dir), "--out", str(base / "whole"), *common)
    assert whole.returncode == 0, whole.stderr[-3000:]
    shards = []
    for k in (1, 2, 3):
        proc = grade(str(class_dir), "--out", str(base / f"shard{k}"), "--shard", f"{k}/3", *common)
        assert proc.returncode == 0, proc.stderr[-3000:]
        shards.append(base / f"shard{k}")
    merged = grade("merge", *map(str, shards), "--out", str(base / "merged"), "--quiet")
    assert merged.returncode == 0, merged.stderr[-3000:]
    return dict(base=base, whole=base / "whole", shards=shards, merged=base / "merged")


def test_shards_are_fixed_by_learner_id_alone():
    ids = [f"learner{i}" for i in range(300)]
    parts = {i: shard_of(i, 3) for i in ids}
    assert set(parts.values()) == {1, 2, 3}
    assert {i: shard_of(i, 3) for i in reversed(ids)} == parts
    assert all(min(list(parts.values()).count(k) for k in (1, 2, 3)) > 60 for _ in [0])


def test_each_shard_grades_only_its_learners(runs):
    seen = []
    for k, d in enumerate(runs["shards"], 1):
        run = json.loads((d / "run.json").read_text())
        assert run["shard"]["index"] == k and run["shard"]["count"] == 3
        assert all(shard_of(i, 3) == k for i in run["submissions"])
        seen += run["submissions"]
    assert sorted(seen) == sorted(LEARNERS + ["hal"])


def test_three_shards_merged_equal_one_unsharded_run(runs):
    whole, merged = runs["whole"], runs["merged"]
    a = json.loads((whole / "report.json").read_text())
    b = json.loads((merged / "report.json").read_text())
    assert _timeless(a) == _timeless(b)
    assert a["run"]["seed"] == b["run"]["seed"] == SEED and b["run"]["shard"] is None
    assert len(b["run"]["merged_from"]) == 3
    assert (whole / "gradebook.csv").read_text() == (merged / "gradebook.csv").read_text()
    ET.parse(merged / "junit.xml")
    assert _junit(whole / "junit.xml") == _junit(merged / "junit.xml")
    feedback = sorted(p.name for p in (whole / "feedback").iterdir())
    assert feedback == sorted(p.name for p in (merged / "feedback").iterdir()) and len(feedback) == 8
    for name in feedback:
        assert (whole / "feedback" / name).read_text() == (merged / "feedback" / name).read_text()
    assert "hal,0,3,unsupported" in (merged / "gradebook.csv").read_text()


def test_a_merge_with_a_gap_an_overlap_or_another_run_is_refused(runs):
    base, (s1, s2, s3) = runs["base"], runs["shards"]
    cases = [
        ((s1, s2), "shard(s) 3/3 missing"),
        ((s1, s2, s2, s3), "given twice"),
        ((s1, s2, s3, runs["whole"]), "not a shard"),
    ]
    odd = base / "odd-seed"
    shutil.copytree(s3, odd)
    run = json.loads((odd / "run.json").read_text())
    run["seed"] = SEED + 1
    (odd / "run.json").write_text(json.dumps(run))
    cases.append(((s1, s2, odd), "another seed"))
    holed = base / "holed"
    shutil.copytree(s3, holed)
    victim = json.loads((holed / "run.json").read_text())["submissions"][0]
    (holed / "submissions" / f"{victim}.json").unlink()
    cases.append(((s1, s2, holed), f"no result for {victim}"))
    for i, (dirs, needle) in enumerate(cases):
        proc = grade("merge", *map(str, dirs), "--out", str(base / f"refused{i}"), "--quiet")
        assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
        assert not (base / f"refused{i}" / "report.json").exists()


def test_bad_shard_arguments_are_clear(tmp_path):
    for value in ("0/3", "4/3", "x", "1/0"):
        proc = grade(str(tmp_path), "--out", str(tmp_path / "o"), "--shard", value)
        assert proc.returncode == 2 and "--shard" in proc.stderr and "Traceback" not in proc.stderr

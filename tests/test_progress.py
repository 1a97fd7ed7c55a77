"""The progress file: concurrent writers, a kill mid-save, a corrupt file."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from course.catalog import load_catalog
from course.progress import Progress

FIXTURE = Path(__file__).parent / "fixtures" / "course"
REPO = Path(__file__).resolve().parents[1]


@dataclass
class FakeResult:
    exercise: str
    passed: bool
    cause: str | None = None


def test_record_pass_fail_and_next_pending(tmp_path):
    path = tmp_path / "progress.json"
    p = Progress.load(path)
    catalog = load_catalog(FIXTURE)
    assert p.next_pending(catalog).name == "fx_scale"
    p.record(FakeResult("fx_scale", False, "wrong_result"))
    assert not p.is_done("fx_scale") and p.entry("fx_scale")["last_cause"] == "wrong_result"
    p.record(FakeResult("fx_scale", True))
    first_pass = p.entry("fx_scale")["first_pass"]
    p.record(FakeResult("fx_scale", False, "timeout"))  # a later fail does not undo the pass
    again = Progress.load(path)
    assert again.is_done("fx_scale") and again.entry("fx_scale")["attempts"] == 3
    assert again.entry("fx_scale")["first_pass"] == first_pass
    assert again.next_pending(catalog).name == "fx_stats"
    assert again.done_names() == {"fx_scale"}
    data = json.loads(path.read_text())
    assert data["format_version"] == 1 and "fx_scale" in data["exercises"]
    again.reset("fx_scale")
    after = Progress.load(path)
    assert not after.is_done("fx_scale") and after.next_pending(catalog).name == "fx_scale"
    assert after.entry("fx_scale")["attempts"] == 0 and after.passed_before("fx_scale")


def test_a_reset_keeps_the_pass_history_and_can_be_undone(tmp_path):
    path = tmp_path / "progress.json"
    p = Progress.load(path)
    p.record(FakeResult("fx_scale", True))
    p.reveal_hint("fx_scale", available=2)
    first_pass = p.entry("fx_scale")["first_pass"]
    p.reset("fx_scale")
    p.record(FakeResult("fx_scale", False, "wrong_result"))
    p.reset("fx_scale")
    data = json.loads(path.read_text())
    assert data["format_version"] == 1  # an optional key: older readers load the file unchanged
    history = data["exercises"]["fx_scale"]["history"]
    assert [(h["done"], h["attempts"], h["first_pass"]) for h in history] == [
        (True, 1, first_pass), (False, 1, None)]
    assert Progress.load(path).hint_level("fx_scale") == 1

    p.undo_reset("fx_scale")
    p.undo_reset("fx_scale")
    again = Progress.load(path)
    assert again.is_done("fx_scale") and again.entry("fx_scale")["first_pass"] == first_pass
    assert again.entry("fx_scale")["attempts"] == 2 and "history" not in again.entry("fx_scale")
    p.undo_reset("fx_scale")  # nothing left to undo: nothing changes
    assert Progress.load(path).entry("fx_scale") == again.entry("fx_scale")


def test_a_file_without_history_reads_as_before(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text(json.dumps({"format_version": 1, "exercises": {"fx_scale": {
        "done": True, "attempts": 3, "last_cause": None, "first_pass": "2026-05-01T10:12:03+00:00", "hints_seen": 1}}}))
    p = Progress.load(path)
    assert p.is_done("fx_scale") and p.passed_before("fx_scale") and not p.warnings
    p.undo_reset("fx_scale")
    assert Progress.load(path).is_done("fx_scale")


def test_hints_are_remembered_and_capped(tmp_path):
    path = tmp_path / "progress.json"
    p = Progress.load(path)
    assert p.hint_level("fx_scale") == 0
    assert p.reveal_hint("fx_scale", available=2) == 1
    assert p.reveal_hint("fx_scale", available=2) == 2
    assert p.reveal_hint("fx_scale", available=2) == 2
    assert Progress.load(path).hint_level("fx_scale") == 2


def test_env_var_sets_the_location(tmp_path, monkeypatch):
    monkeypatch.setenv("JAXLINGS_PROGRESS", str(tmp_path / "elsewhere.json"))
    Progress.load().record(FakeResult("a", True))
    assert (tmp_path / "elsewhere.json").is_file()


def _writer(path: str, worker: int, n: int) -> None:
    for i in range(n):
        Progress.load(path).record(FakeResult(f"ex{worker}_{i % 3}", i % 2 == 0, None if i % 2 == 0 else "exception"))


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "progress.json"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 30)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    data = json.loads(path.read_text())
    attempts = {name: e["attempts"] for name, e in data["exercises"].items()}
    assert attempts == {f"ex{w}_{k}": 10 for w in range(4) for k in range(3)}
    assert not list(tmp_path.glob("*.corrupt-*"))


SAVE_FOREVER = """
import sys
from dataclasses import dataclass
from course.progress import Progress

@dataclass
class R:
    exercise: str
    passed: bool
    cause: str | None = None

p = Progress.load(sys.argv[1])
print("ready", flush=True)
i = 0
while True:
    p.record(R(f"ex{i % 50}", True))
    i += 1
"""


def test_a_kill_during_saves_leaves_a_readable_file(tmp_path):
    path = tmp_path / "progress.json"
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", SAVE_FOREVER, str(path)], cwd=REPO, stdout=subprocess.PIPE)
        assert proc.stdout.readline().strip() == b"ready"
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        p = Progress.load(path)
        assert p.warnings == [], p.warnings
        assert len(p.done_names()) > 0
    assert not list(tmp_path.glob("*.corrupt-*"))


def test_corrupt_file_is_backed_up_and_reported(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text('{"format_version": 1, "exercises": {"a": ')
    p = Progress.load(path)
    assert len(p.warnings) == 1 and "moved to" in p.warnings[0]
    backups = list(tmp_path.glob("progress.json.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_text().startswith('{"format_version"')
    assert p.done_names() == set()
    p.record(FakeResult("a", True))  # the course carries on
    assert Progress.load(path).is_done("a")


def test_wrong_shape_counts_as_corrupt(tmp_path):
    path = tmp_path / "progress.json"
    path.write_text('["not", "an", "object"]')
    p = Progress.load(path)
    assert p.warnings and "not a JSON object" in p.warnings[0]
    assert len(list(tmp_path.glob("progress.json.corrupt-*"))) == 1

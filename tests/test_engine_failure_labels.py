"""What the learner's process did to itself is said as it happened: closing the channel the check
talks to it through is neither a crash nor an exit, and a fork bomb is not out of memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from course.catalog import load_catalog
from course.engine.isolation import for_checks
from course.engine.runner import CheckSession

CLOSES_AND_RETURNS = """
import os


def clip_by_norm(g, max_norm):
    os.closerange(3, 4096)
    return g


def huber_loss(pred, target, delta):
    return pred
"""
CLOSES_AND_RUNS_ON = CLOSES_AND_RETURNS.replace("    return g\n", "    import time\n    time.sleep(600)\n")
FORK_BOMB = """
import os


def clip_by_norm(g, max_norm):
    while True:
        try:
            os.fork()
        except OSError:
            pass


def huber_loss(pred, target, delta):
    return pred
"""


def _check(tmp_path: Path, learners: dict[str, str]) -> dict:
    results = {}
    with CheckSession(warm=False) as session:
        for name, source in learners.items():
            learner = tmp_path / name / "jit_branch.py"
            learner.parent.mkdir()
            learner.write_text(source, encoding="utf-8")
            results[name] = session.run(load_catalog().exercise("jit_branch"), learner_file=learner,
                                        first_failure=True)
    return results


def test_closing_the_checks_channel_is_said_so_whether_the_process_ends_or_runs_on(tmp_path):
    results = _check(tmp_path, {"returns": CLOSES_AND_RETURNS, "runs_on": CLOSES_AND_RUNS_ON})
    for name, result in results.items():
        assert not result.passed and result.cause == "channel_closed", (name, result.cause, result.message)
        assert "closed the channel the check talks to it through" in result.message, result.message
        assert "crashed" not in result.message and "exit code" not in result.message, result.message


def test_a_fork_bomb_is_said_to_start_too_many_processes_not_to_run_out_of_memory(tmp_path):
    policy = for_checks()
    if policy is None or not policy.describe()["guarantees"].get("tasks_limited"):
        pytest.skip("no sandbox here bounds a learner's processes: a fork bomb would reach the machine")
    (result,) = _check(tmp_path, {"bomb": FORK_BOMB}).values()
    assert not result.passed and result.cause == "too_many_processes", (result.cause, result.message)
    assert "processes" in result.message and "memory" not in result.message, result.message

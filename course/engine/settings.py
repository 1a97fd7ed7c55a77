"""A check's settings, read from its module's source, and the seed and time it runs with."""

from __future__ import annotations

import ast
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from course.catalog import Exercise

DEFAULT_TIMEOUT = 30.0
READY_TIMEOUT = 180.0  # starting Python and importing JAX on a busy machine; not the learner's time


def draw_seed(seed: int | None = None) -> int:
    if seed is not None:
        return int(seed)
    env = os.environ.get("JAXLINGS_SEED", "").strip()
    if env:
        try:
            return int(env)
        except ValueError:
            raise ValueError(f"JAXLINGS_SEED must be an integer, got {env!r}") from None
    return secrets.randbelow(2**31)


# -- settings in a check module ------------------------------------------------


@dataclass(frozen=True)
class CheckSettings:
    timeout: float | None = None
    child_env: dict[str, str] = field(default_factory=dict)
    # Friendly messages by exception name (e.g. "KeyReuseError"), for errors the
    # check provokes on purpose in the learner's code.
    messages: dict[str, str] = field(default_factory=dict)
    # False for a check whose reference results depend on more than their inputs
    # (a clock, files): the reference then runs every time.
    cache_reference: bool = True
    # How many times the check calls `learner.restart()`: the session keeps a process
    # ready for it, as it does for the first.
    fresh_learners: int = 0


_SETTINGS_CACHE: dict[tuple[str, int], CheckSettings] = {}


def check_settings(path: Path) -> CheckSettings:
    """TIMEOUT, CHILD_ENV, MESSAGES, CACHE_REFERENCE and FRESH_LEARNERS, read as literals from the module's source.

    Read before pytest imports the module because the child's environment must
    be chosen before the learner's process starts.
    """
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns)
    if key not in _SETTINGS_CACHE:
        timeout, env, messages, cache_reference, fresh = None, {}, {}, True, 0
        for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                if name == "TIMEOUT":
                    timeout = float(ast.literal_eval(node.value))
                elif name == "CHILD_ENV":
                    env = {str(k): str(v) for k, v in ast.literal_eval(node.value).items()}
                elif name == "MESSAGES":
                    messages = {str(k): str(v) for k, v in ast.literal_eval(node.value).items()}
                elif name == "CACHE_REFERENCE":
                    cache_reference = bool(ast.literal_eval(node.value))
                elif name == "FRESH_LEARNERS":
                    fresh = int(ast.literal_eval(node.value))
        _SETTINGS_CACHE[key] = CheckSettings(timeout, env, messages, cache_reference, fresh)
    return _SETTINGS_CACHE[key]


def time_budget(exercise: Exercise, check_path: Path | None = None) -> float:
    """Seconds the learner's code may use in one check run: the manifest's timeout, else
    the check module's TIMEOUT, else DEFAULT_TIMEOUT (the rule CheckSession.run applies).
    Raises OSError, SyntaxError or ValueError for a missing or unreadable check module."""
    if exercise.timeout:
        return float(exercise.timeout)
    return check_settings(check_path or exercise.check_path()).timeout or DEFAULT_TIMEOUT

"""Fixture courses under tests/ hold check modules named test_*.py; they are run by
the engine and the grader inside the tests, never collected as tests themselves.

`jaxlings check` hands checks to a per-workspace server it starts on demand; the
suite's many throw-away workspaces would each leave one behind for minutes, so
it is off unless a test turns it on (tests/test_check_server.py)."""

import os

collect_ignore = ["fixtures", "grader_fixtures", "alternatives"]

os.environ.setdefault("JAXLINGS_SERVER", "0")

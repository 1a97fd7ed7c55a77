"""Fixture courses under tests/ hold check modules named test_*.py; they are run by
the engine and the grader inside the tests, never collected as tests themselves."""

collect_ignore = ["fixtures", "grader_fixtures", "alternatives", "attacks"]

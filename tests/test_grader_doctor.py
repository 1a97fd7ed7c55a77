"""`jaxlings doctor` says what is true and what its reader can do about it.

- Isolation: root is never told to install a bubblewrap that is installed (root passes it over
  on purpose: bwrap run by root would map graded code to host root).
- Translations: the learner's own files in exercises/ (a starter put in their language, code
  they wrote) are not the course's messages, and a learner is never told to edit a catalog.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
STARTER = "01_ecosystem/functional_ops.py"


@pytest.fixture
def bwrap_installed(tmp_path, monkeypatch):
    """A `bwrap` on PATH. As root it is passed over before it is ever run."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "bwrap").write_text("#!/bin/sh\nexit 1\n")
    (folder / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    from course.engine.isolation import for_checks

    for_checks.cache_clear()
    yield
    for_checks.cache_clear()


@pytest.mark.skipif(os.geteuid() != 0, reason="what root is told")
def test_root_is_not_told_to_install_the_bubblewrap_it_passed_over(bwrap_installed):
    from course.shell.commands import _doctor_isolation

    lines = _doctor_isolation(SimpleNamespace(grading=False))["check"]
    said = "\n".join(lines)
    assert "apt-get install bubblewrap" not in said and "install bubblewrap" not in said, said
    [line] = [ln for ln in lines if ln.startswith("bubblewrap:")]
    assert "installed" in line and "root" in line, line


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                   check=True, capture_output=True, timeout=60)


def test_the_learners_own_starters_are_not_counted_as_untranslated_messages(tmp_path, monkeypatch):
    """A checkout the learner works in: exercises/ holds their files, here the Japanese starter the
    course gave them. The course's own statement is the committed English one, in the catalog."""
    from course.i18n.state import language_state

    course = tmp_path / "course"
    (course / "exercises" / STARTER).parent.mkdir(parents=True)
    shutil.copy(ROOT / "babel-content.cfg", course / "babel-content.cfg")
    english = (ROOT / "exercises" / STARTER).read_text(encoding="utf-8")
    (course / "exercises" / STARTER).write_text(english, encoding="utf-8")
    _git(course, "init", "-q")
    _git(course, "add", "-A")
    _git(course, "commit", "-q", "-m", "course")
    (course / "exercises" / STARTER).write_text((ROOT / "starters" / "ja" / STARTER).read_text(encoding="utf-8"),
                                                encoding="utf-8")
    monkeypatch.setenv("JAXLINGS_COURSE_ROOT", str(course))  # the learner's workspace is the course's folder
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    assert language_state("ja", [], course / "lessons", course)["not_in_catalog"] == {}
    # The course's own statement is still read: a new English one, committed, is not in the catalog yet.
    (course / "exercises" / STARTER).write_text(english.replace('"""', '"""A new first line.\n', 1),
                                                encoding="utf-8")
    _git(course, "commit", "-q", "-am", "a new statement")
    assert language_state("ja", [], course / "lessons", course)["not_in_catalog"] == {"content": 1}


def test_every_translation_warning_says_who_can_act_on_it():
    from course.i18n.state import warnings

    state = {"untranslated": {"jaxlings": 2}, "not_in_catalog": {"content": 1},
             "broken_catalogs": {"app": "misformatted"}, "placeholder_mismatches": {"jaxlings": ["Saved {path}."]},
             "lessons_missing": ["02_b.md"], "unmarked": 3}
    said = warnings({"ja": state})
    assert len(said) == 6
    for warning in said:
        assert "the course's maintainers" in warning, warning
        # No bare command to the reader: a learner cannot act on a catalog.
        assert not any(f". {verb} " in warning for verb in ("Translate", "Run", "Fix", "Mark")), warning

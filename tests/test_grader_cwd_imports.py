"""No command the course offers imports from the folder it is started in.

`python -m course` puts that folder first on sys.path: started from a folder holding a
`course/` package of its own (a class folder, a learner's repository), it runs that package,
with the rights of whoever typed it (an instructor, root). The README, the docs, every
translated message (help texts, printed hints) and the grader's own scripts offer
`python -I -m course` or the `jaxlings` script instead.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# `python`, `python3`, `.venv/bin/python3.11`, then any options, then `-m course` (or a module of it).
RUN_COURSE = re.compile(r"python[0-9.]*(?P<options>(?:[ \t]+-[A-Za-z]+)*)[ \t]+-m[ \t]+course\b")


def _offered(text: str) -> list[str]:
    """The `python -m course...` commands in `text` that leave out -I."""
    return [m.group(0) for m in RUN_COURSE.finditer(text)
            if not re.search(r"(?:^|\s)-[A-Za-z]*I", m.group("options"))]


def test_the_pattern_finds_what_it_must():
    assert _offered("or `python -m course`.") == ["python -m course"]
    assert _offered("run .venv/bin/python3 -u -m course.grader.classroom verdict") == [
        "python3 -u -m course"]
    assert _offered("`python -I -m course`, `python -IS -m course`, `jaxlings`, python -m coursework") == []


def test_the_readme_docs_messages_and_grader_scripts_offer_no_command_that_imports_from_the_cwd():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "course" / "locale").rglob("*.po")), *sorted((ROOT / "course" / "grader").glob("*.py"))]
    found = {str(f.relative_to(ROOT)): _offered(f.read_text(encoding="utf-8")) for f in files}
    assert {f: cmds for f, cmds in found.items() if cmds} == {}


def test_python_I_m_course_runs_the_course_from_a_folder_with_a_course_package_of_its_own(tmp_path):
    """Why: the planted package runs under plain `-m`, never under `-I -m`."""
    planted = tmp_path / "course"
    planted.mkdir()
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text("print('PLANTED')\n")
    plain = subprocess.run([sys.executable, "-m", "course", "--version"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=120)
    assert "PLANTED" in plain.stdout
    isolated = subprocess.run([sys.executable, "-I", "-m", "course", "--version"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
    assert isolated.returncode == 0 and "PLANTED" not in isolated.stdout, isolated.stderr[-2000:]

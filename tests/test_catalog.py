"""The manifest: a good one loads in order; every kind of broken one is reported clearly."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course.catalog import ManifestError, load_catalog, validate

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parents[1]


def course_with(tmp_path: Path, manifest: str) -> Path:
    (tmp_path / "lessons").mkdir(parents=True)
    shutil.copy(FIXTURES / "manifests" / manifest, tmp_path / "lessons" / "course.toml")
    return tmp_path


def test_fixture_course_loads_in_order():
    catalog = load_catalog(FIXTURES / "course")
    assert [e.name for e in catalog.exercises] == ["fx_scale", "fx_stats", "fx_devices"]
    ex = catalog.exercise("fx_stats")
    assert ex.lesson == "basics" and ex.timeout == 20 and ex.points == 1.0
    assert ex.hints == ("Use jnp.mean and jnp.std.", "Return a dict.")
    assert catalog.lesson_of("fx_scale").title == "Basics"
    assert ex.solution_path() == (FIXTURES / "course" / "solutions" / "01_basics" / "stats.py").resolve()
    assert ex.check_path().name == "test_fx_stats.py" and ex.check_path().is_file()
    assert catalog.lesson("basics").lesson_path().is_file()
    assert validate(FIXTURES / "course") == []


def test_unknown_names_get_a_clear_key_error():
    catalog = load_catalog(FIXTURES / "course")
    with pytest.raises(KeyError, match="no exercise named 'fx_scal'.*fx_scale"):
        catalog.exercise("fx_scal")
    with pytest.raises(KeyError, match="no lesson named"):
        catalog.lesson("nope")


def test_broken_manifest_lists_every_problem(tmp_path):
    root = course_with(tmp_path, "broken.toml")
    with pytest.raises(ManifestError) as err:
        load_catalog(root)
    text = str(err.value)
    for expected in ("unknown field 'colour'", "exercise 'dup': duplicate exercise name",
                     "unknown field 'difficulty'", "exercise 'no_check': missing field 'check'",
                     "'../../etc/passwd' must be a relative path"):
        assert expected in text
    lenient = load_catalog(root, strict=False)
    assert [e.name for e in lenient.exercises] == ["dup"]  # the first, valid one is kept
    problems = validate(root)
    assert any("starter exercises/one/a.py is missing" in p for p in problems)
    assert any("lesson text lessons/one.md is missing" in p for p in problems)


def test_bad_format_version_and_bad_toml(tmp_path):
    with pytest.raises(ManifestError, match="format_version 99 is not supported"):
        load_catalog(course_with(tmp_path / "a", "bad_version.toml"))
    with pytest.raises(ManifestError, match="not valid TOML"):
        load_catalog(course_with(tmp_path / "b", "not_toml.toml"))
    with pytest.raises(ManifestError, match="does not exist"):
        load_catalog(tmp_path / "nowhere")


def test_too_few_hints_and_missing_files_are_problems_for_doctor(tmp_path):
    root = tmp_path / "c"
    shutil.copytree(FIXTURES / "course", root)
    manifest = root / "lessons" / "course.toml"
    manifest.write_text(manifest.read_text().replace('hints = ["Multiply.", "Return `x * alpha + 1`."]', 'hints = ["Multiply."]'))
    (root / "solutions" / "01_basics" / "stats.py").unlink()
    problems = validate(root)
    assert "exercise 'fx_scale': has 1 hint(s), needs at least 2" in problems
    assert "exercise 'fx_stats': solution solutions/01_basics/stats.py is missing" in problems


def test_doctor_reports_a_broken_manifest_with_exit_code_2(tmp_path):
    root = course_with(tmp_path, "broken.toml")
    proc = subprocess.run(
        [sys.executable, "-m", "course", "doctor"], cwd=REPO, capture_output=True, text=True,
        env={"JAXLINGS_COURSE_ROOT": str(root), "PATH": "/usr/bin:/bin", "COLUMNS": "200"}, timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "duplicate exercise name" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_real_manifest_structure_is_valid():
    catalog = load_catalog()
    assert len(catalog.exercises) >= 30
    assert len({e.name for e in catalog.exercises}) == len(catalog.exercises)

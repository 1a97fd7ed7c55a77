"""The install a newcomer runs (`make course`: `pip install -e .`) prints no warning banner."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_an_editable_install_is_a_plain_pth_entry_without_a_warning_banner():
    # setuptools chooses a .pth entry when every package lives under the one folder named as
    # package-dir[""] (its `_simple_layout`); otherwise it installs an import hook and prints
    # a "Please be careful with folders in your working directory" banner through pip.
    from setuptools import find_packages
    from setuptools.command.editable_wheel import _simple_layout

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert config["package-dir"] == {"": "."}
    packages = find_packages(str(ROOT), include=config["packages"]["find"]["include"])
    assert "course" in packages and "course.lab.variants" in packages
    assert _simple_layout(packages, config["package-dir"], ROOT)


def test_the_authoring_templates_are_package_data():
    # `jaxlings dev new` reads them from the installed package: a template no pattern names would
    # be missing from a wheel, and a course written from it would be incomplete.
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    devkit = ROOT / "course" / "devkit"
    shipped = {p for pattern in config["package-data"]["course.devkit"] for p in devkit.glob(pattern)}
    templates = {p for p in devkit.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".py"}
    assert templates and templates <= shipped, sorted(str(p) for p in templates - shipped)

"""The core never imports the UI: the CLI, the grader and CI use it without Textual."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_core_modules_do_not_import_textual():
    code = (
        "import sys\n"
        "import course.catalog, course.engine.runner, course.progress, course.commands, course.engine.checking, course.engine.wire\n"
        "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"textual imported by the core: {proc.stdout.strip()}"

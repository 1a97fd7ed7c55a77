"""Run a Gradescope autograder bundle (`jaxlings grade --bundle gradescope`) the way Gradescope's
image does, with its fixed paths (/autograder, /opt/jaxlings) moved under a temporary folder: the
bundled package, manifest, checks and baked options must grade on their own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path


def run_bundle(bundle: Path, submission: dict[str, str], home: Path, timeout: float = 900) -> dict:
    """Unpack `bundle` (autograder.zip) into home/source, put `submission` ({file name: text}) in
    home/submission, run its run_autograder, and return the results.json it wrote."""
    source, folder = home / "source", home / "submission"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(source)
    folder.mkdir(parents=True)
    for name, text in submission.items():
        (folder / name).write_text(text, encoding="utf-8")
    script = (source / "run_autograder").read_text(encoding="utf-8")
    script = script.replace("/opt/jaxlings/bin/python", sys.executable).replace("/autograder", str(home))
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINGS_")}
    env["PYTHONPATH"] = ""  # the bundled copy of the package, not this checkout's
    run = subprocess.run(["bash", "-c", script.rstrip() + " --isolation process --quiet"], env=env,
                         capture_output=True, text=True, timeout=timeout, cwd=home.parent)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads((home / "results" / "results.json").read_text(encoding="utf-8"))

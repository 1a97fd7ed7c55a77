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
    script = script.replace("/autograder", str(home))
    script = script.replace("/opt/jaxlings/bin/python", str(_image_python(home, source)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINGS_")}
    run = subprocess.run(["bash", "-c", script.rstrip() + " --isolation process --quiet"], env=env,
                         capture_output=True, text=True, timeout=timeout, cwd=home.parent)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads((home / "results" / "results.json").read_text(encoding="utf-8"))


def _image_python(home: Path, source: Path) -> Path:
    """The image's /opt/jaxlings: a Python whose installed `course` is the bundle's copy (setup.sh
    installs it editable), with this interpreter's libraries. run_autograder runs it with -I, so
    neither PYTHONPATH nor the folder it starts in can name the package."""
    venv = home / "opt-jaxlings"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = venv.glob("lib/python3*/site-packages")
    libraries = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    # A plain path line: the folder is put on sys.path, but this checkout's own editable
    # install (a .pth file in it) is not read, so `course` is the bundle's.
    (site / "image.pth").write_text(f"{source}\n{libraries}\n", encoding="utf-8")
    return venv / "bin" / "python"

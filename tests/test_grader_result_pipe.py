"""What a learner's process writes on the pipe its results come back on is judged for what it is.

Bytes that are not a result (here: text written on every descriptor the process holds) are
reported as such: not as running out of memory, with a size read from the text's first bytes.
"""

from __future__ import annotations

import json

from test_grader_class import SOLUTIONS, _write, grade

JUNK_SCALE = """
import os
for fd in range(3, 256):
    try:
        os.write(fd, b"not a result, just text\\n" * 4)
    except OSError:
        pass

def scale(x, factor):
    return x * factor
"""


def test_junk_on_the_result_pipe_is_reported_as_junk_not_as_out_of_memory(tmp_path):
    class_dir, out = tmp_path / "class", tmp_path / "out"
    _write(class_dir / "junk", {"exercises/01_basics/add.py": (SOLUTIONS / "add.py").read_text(),
                                "exercises/01_basics/scale.py": JUNK_SCALE})
    proc = grade(str(class_dir), "--out", str(out), "--jobs", "1", "--seed", "5", "--quiet")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [sub] = json.loads((out / "report.json").read_text())["submissions"]
    scale = sub["exercises"]["scale"]
    said = json.dumps(scale)
    assert scale["cause"] == "not_plain_data", said
    assert "not a result" in said and "MiB" not in said and "memory" not in said, said
    assert sub["exercises"]["add"]["passed"]

"""The authoring kit, used as an instructor would: `jaxlings dev new`, `dev new-exercise`, files an
author writes (checks import only `course.authoring`), `dev check`, then grading the course.

The course is built once per module (`authored`): the template exercise, and a second one,
`dropout`, added with `dev new-exercise` and filled in the way docs/authoring.md says.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from gradescope_run import run_bundle

ROOT = Path(__file__).resolve().parents[1]


def jaxlings(*args: str, cwd: Path | None = None, env: dict | None = None, timeout: float = 900):
    return subprocess.run([sys.executable, "-m", "course", *args], capture_output=True, text=True,
                          cwd=cwd or ROOT, timeout=timeout, env={**os.environ, **(env or {})})


# What an author writes for the second exercise, after `dev new-exercise dropout`.
DROPOUT_STATEMENT = '''"""Inverted dropout, with the randomness made explicit.

`dropout(seed, x, rate)` keeps each entry of x with probability 1 - rate, independently, and
divides the kept entries by 1 - rate (as torch.nn.functional.dropout does in training); dropped
entries are 0. Draw the mask from jax.random.key(seed): the same seed gives the same mask.
"""

import jax
import jax.numpy as jnp


'''
DROPOUT_STARTER = DROPOUT_STATEMENT + '''def dropout(seed, x, rate):
    raise NotImplementedError("TODO: inverted dropout")
'''
DROPOUT_SOLUTION = DROPOUT_STATEMENT + '''def dropout(seed, x, rate):
    keep = jax.random.bernoulli(jax.random.key(seed), 1.0 - rate, jnp.shape(x))
    return jnp.where(keep, x / (1.0 - rate), 0.0)
'''
DROPOUT_CHECK = '''"""The check of dropout: outputs on inputs drawn here; the mask read off them and tested here."""

import numpy as np

from course.authoring import assert_close, evidence, fail, mask_is_random

TIMEOUT = 60


def _inputs(rng):
    shape = (int(rng.integers(40, 70)), int(rng.integers(40, 70)))
    x = (rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)).astype(np.float32)
    return int(rng.integers(0, 2**31 - 1)), x, float(rng.uniform(0.2, 0.6))


@evidence.recomputed("kept entries are divided by 1 - rate and dropped ones are 0; the mask keeps each entry "
                     "with probability 1 - rate, independently",
                     evidence="dropout(seed, x, rate) on a seed, x and rate drawn here; the mask read off the "
                              "outputs and tested here")
def test_dropout(learner, rng):
    seed, x, rate = _inputs(rng)
    got = np.asarray(learner.call("dropout", seed, x, rate))
    what = f"dropout(seed, x, rate={rate:.3f}) for x of shape {x.shape}"
    if got.shape != x.shape:
        fail(f"{what} returned shape {got.shape}; expected {x.shape}.")
    kept = got != 0
    if kept.any() and np.allclose(got[kept], x[kept]):
        fail(f"{what}: the kept entries must be divided by 1 - rate, so that the expected output is x.")
    assert_close(got[kept], (x[kept] / np.float32(1 - rate)).astype(np.float32), what=what, rtol=1e-5, atol=1e-6)
    mask_is_random(kept, 1 - rate, rng, what=what)


@evidence.recomputed("the seed decides the mask", evidence="outputs for one seed twice and for another seed")
def test_the_seed_decides(learner, rng):
    seed, x, rate = _inputs(rng)
    first, again = learner.call("dropout", seed, x, rate), learner.call("dropout", seed, x, rate)
    other = learner.call("dropout", seed + 1, x, rate)
    if not np.array_equal(np.asarray(first) != 0, np.asarray(again) != 0):
        fail("dropout(seed, ...) twice with the same seed gave two masks: draw it from jax.random.key(seed).")
    if np.array_equal(np.asarray(first) != 0, np.asarray(other) != 0):
        fail("dropout gave the same mask for two seeds: draw it from jax.random.key(seed).")
'''
DROPOUT_PATTERN = '''"""A cheat: a fixed arithmetic pattern with exactly the right keep rate, and no randomness."""

import numpy as np


def dropout(seed, x, rate):
    x = np.asarray(x)
    i, j = np.indices(x.shape)
    keep = ((i * 7 + j * 13 + seed) % 100) >= int(round(rate * 100))
    return np.where(keep, x / (1.0 - rate), 0.0).astype(np.float32)
'''
DROPOUT_NEAR = '''"""A near miss: the mask is right, the kept entries are not rescaled."""

import jax
import jax.numpy as jnp

MESSAGE = r"divided by 1 - rate"


def dropout(seed, x, rate):
    keep = jax.random.bernoulli(jax.random.key(seed), 1.0 - rate, jnp.shape(x))
    return jnp.where(keep, x, 0.0)
'''


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def authored(tmp_path_factory) -> Path:
    course = tmp_path_factory.mktemp("authored") / "lab-course"
    made = jaxlings("dev", "new", str(course), "--title", "Lab course: week 1")
    assert made.returncode == 0, made.stderr
    added = jaxlings("--course", str(course), "dev", "new-exercise", "dropout")
    assert added.returncode == 0, added.stderr
    # The author fills in what `new-exercise` left marked.
    _write(course / "exercises" / "01_standardize" / "dropout.py", DROPOUT_STARTER)
    _write(course / "solutions" / "01_standardize" / "dropout.py", DROPOUT_SOLUTION)
    _write(course / "checks" / "test_dropout.py", DROPOUT_CHECK)
    (course / "attacks" / "dropout" / "near_mistake.py").unlink()
    _write(course / "attacks" / "dropout" / "pattern_mask.py", DROPOUT_PATTERN)
    _write(course / "attacks" / "dropout" / "near_no_rescale.py", DROPOUT_NEAR)
    manifest = course / "lessons" / "course.toml"
    text = manifest.read_text(encoding="utf-8")
    text = text.replace('"TODO (author): a nudge toward the idea."',
                        '"jax.random.bernoulli(key, p, shape) draws the mask: p is the probability to keep."')
    text = text.replace('"TODO (author): a stronger hint, close to the answer."',
                        '"jnp.where(keep, x / (1 - rate), 0.0) keeps, rescales and drops in one step."')
    manifest.write_text(text, encoding="utf-8")
    return course


def _private_imports(folder: Path) -> list[str]:
    found = []
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
            found += [f"{path.name}: {n}" for n in names if n.startswith("course") and n != "course.authoring"]
    return found


def test_dev_check_accepts_the_course_an_author_builds(authored):
    assert _private_imports(authored) == []
    catalog = tomllib.loads((authored / "lessons" / "course.toml").read_text(encoding="utf-8"))
    assert [e["name"] for e in catalog["lessons"][0]["exercises"]] == ["standardize", "dropout"]
    before = {p: p.read_bytes() for p in authored.rglob("*") if p.is_file()}
    result = jaxlings("dev", "check", str(authored), "--seeds", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No problems" in result.stdout
    after = {p: p.read_bytes() for p in authored.rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert after == {p: b for p, b in before.items() if "__pycache__" not in p.parts}, "dev check wrote the course"


def test_dev_check_rejects_broken_copies_naming_each_problem(authored, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(authored, broken, ignore=shutil.ignore_patterns("__pycache__", ".jaxlings"))
    # 1. a starter that passes: the solution handed out as the starter
    shutil.copy(broken / "solutions" / "01_standardize" / "standardize.py",
                broken / "exercises" / "01_standardize" / "standardize.py")
    # 2. a solution that fails: dropout without the rescaling
    _write(broken / "solutions" / "01_standardize" / "dropout.py",
           DROPOUT_STATEMENT + DROPOUT_NEAR.split("MESSAGE", 1)[1].split("\n", 2)[2])
    # 3. an attack that passes: a correct file among the attacks
    shutil.copy(broken / "alternatives" / "standardize" / "with_variance.py",
                broken / "attacks" / "standardize" / "variance.py")
    # 4. a check that judges from a value the learner's process reports, unchecked
    check = broken / "checks" / "test_standardize.py"
    check.write_text(check.read_text(encoding="utf-8") + textwrap.dedent('''

        def probe_is_jitted(module):
            return callable(module.standardize)


        @evidence.reported("standardize is jitted", evidence="callable() read in the child")
        def test_is_jitted(learner):
            if not learner.probe(probe_is_jitted):
                fail("standardize is not jitted")
        '''), encoding="utf-8")
    reported_line = next(i for i, line in enumerate(check.read_text().splitlines(), 1)
                         if line.startswith("@evidence.reported"))

    result = jaxlings("dev", "check", str(broken), "--seeds", "1", "--no-lessons")
    assert result.returncode == 1, result.stdout + result.stderr
    lines = [ln for ln in result.stdout.splitlines() if re.match(r"^\S+:\d+: ", ln)]
    def one(pattern):
        hits = [ln for ln in lines if re.search(pattern, ln)]
        assert len(hits) == 1, f"/{pattern}/ in:\n" + "\n".join(lines)
        return hits[0]
    one(r"^exercises/01_standardize/standardize\.py:1: the starter passes its check")
    one(r"^solutions/01_standardize/dropout\.py:1: fails its check with seed \d+: test_dropout "
        r"\(checks/test_dropout\.py:\d+\): .*divided by 1 - rate")
    one(r"^attacks/standardize/variance\.py:1: the attack passes the check")
    one(rf"^checks/test_standardize\.py:{reported_line}: test_is_jitted judges from a value the learner's process "
        r"reports \(callable\(\) read in the child\) and nothing here cross-checks it")
    assert len(lines) == 4, "\n".join(lines)
    assert f"{len(lines)} problem(s)." in result.stdout


def test_the_worked_example_in_the_docs_is_the_template():
    """docs/authoring.md quotes the template course's files: every Python block it shows is in one."""
    doc = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python norun\n(.*?)```", doc, re.S)
    templates = [p.read_text(encoding="utf-8") for p in (ROOT / "course" / "devkit" / "template").rglob("*.tmpl")]
    assert len(blocks) >= 4
    for block in blocks:
        assert any(block in t for t in templates), f"docs/authoring.md shows code no template holds:\n{block}"


# -- the kit's parts, without running checks ----------------------------------------------


def test_new_refuses_a_folder_that_holds_anything_and_writes_nothing(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    result = jaxlings("dev", "new", str(tmp_path))
    assert result.returncode == 2 and "not an empty folder" in result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_new_exercise_places_it_where_asked_and_never_overwrites(tmp_path):
    from course.catalog import load_catalog
    from course.devkit.scaffold import ScaffoldError, new_course, new_exercise

    course = tmp_path / "c"
    new_course(course, 'A "quoted" title\\')
    assert load_catalog(course).title == 'A "quoted" title\\'
    new_exercise(course, "scale")  # the last lesson
    new_exercise(course, "layer_norm", "norms")  # a new lesson, with its text
    catalog = load_catalog(course)
    assert [(le.name, [e.name for e in le.exercises]) for le in catalog.lessons] == [
        ("standardize", ["standardize", "scale"]), ("norms", ["layer_norm"])]
    assert (course / "lessons" / "02_norms.md").is_file()
    assert (course / "checks" / "test_layer_norm.py").is_file()
    manifest = (course / "lessons" / "course.toml").read_bytes()
    for name, lesson, why in (("scale", None, "already has an exercise"),
                              ("late", "standardize", "add it by hand"),
                              ("bad name", None, "not a usable exercise name"),
                              ("class", None, "not a usable exercise name")):
        with pytest.raises(ScaffoldError, match=why):
            new_exercise(course, name, lesson)
    assert (course / "lessons" / "course.toml").read_bytes() == manifest
    # A file of that name is already there (the author's own work): refused, the manifest untouched.
    mine = course / "checks" / "test_ready.py"
    mine.write_text("# mine\n", encoding="utf-8")
    with pytest.raises(ScaffoldError, match="exist already"):
        new_exercise(course, "ready")
    assert mine.read_text(encoding="utf-8") == "# mine\n"
    assert (course / "lessons" / "course.toml").read_bytes() == manifest
    assert not (course / "exercises" / "02_norms" / "ready.py").exists()


def test_a_problem_line_shows_control_characters_escaped():
    from course.devkit.verify import Problem

    line = str(Problem("attacks/x/\x1b[2Jname.py", 1, "fails: \u202eevil\r\nnext\ud800"))
    assert line == "attacks/x/\\x1b[2Jname.py:1: fails: \\u202eevil\\r\\nnext\\ud800"


def test_mask_is_random_tells_independent_draws_from_a_pattern():
    import numpy as np

    from course.authoring import mask_is_random
    from course.engine.checking import CheckFailure

    rng = np.random.default_rng(7)
    mask_is_random(rng.random((60, 50)) < 0.7, 0.7, rng, what="a mask")  # passes
    i, j = np.indices((60, 50))
    pattern = ((i * 7 + j * 13) % 100) >= 30  # the keep rate is exactly 0.7
    with pytest.raises(CheckFailure, match="independent draws"):
        mask_is_random(pattern, 0.7, rng, what="a mask")
    with pytest.raises(CheckFailure, match="boolean mask"):
        mask_is_random(np.ones(5), 0.7, rng, what="a mask")


def test_dev_check_refuses_what_is_not_a_course(tmp_path):
    result = jaxlings("dev", "check", str(tmp_path))
    assert result.returncode == 2 and "not a course" in result.stderr
    result = jaxlings("dev", "check", str(ROOT))
    assert result.returncode == 2 and "make test" in result.stderr


# -- grading a class on the authored course ----------------------------------------------


def _clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("JAXLINGS_")}


def test_the_authored_course_is_graded_sharded_merged_and_bundled(authored, tmp_path):
    import json
    import zipfile

    class_dir = tmp_path / "class"
    files = {"standardize": "01_standardize/standardize.py", "dropout": "01_standardize/dropout.py"}
    for learner, folder in (("ada", "solutions"), ("bob", "exercises")):
        for file in files.values():
            target = class_dir / learner / "exercises" / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(authored / folder / file, target)
    env = _clean_env()
    shards = []
    for k in (1, 2):
        out = tmp_path / f"shard{k}"
        proc = subprocess.run([sys.executable, "-m", "course", "--course", str(authored), "grade", str(class_dir),
                               "--out", str(out), "--shard", f"{k}/2", "--seed", "11", "--quiet"],
                              capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-3000:]
        shards.append(str(out))
    merged = tmp_path / "merged"
    proc = subprocess.run([sys.executable, "-m", "course", "--course", str(authored), "grade", "merge", *shards,
                           "--out", str(merged)], capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((merged / "report.json").read_text(encoding="utf-8"))
    verdicts = {s["id"]: {name: e["passed"] for name, e in s["exercises"].items()} for s in report["submissions"]}
    assert verdicts == {"ada": {"standardize": True, "dropout": True},
                        "bob": {"standardize": False, "dropout": False}}
    assert (merged / "gradebook.csv").read_text(encoding="utf-8").splitlines()[0].endswith(",standardize,dropout")

    # Gradescope: the bundle carries this course, and its own autograder grades with its checks.
    bundle = tmp_path / "bundle"
    proc = subprocess.run([sys.executable, "-m", "course", "--course", str(authored), "grade", "--bundle",
                           "gradescope", "--out", str(bundle)], capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with zipfile.ZipFile(bundle / "autograder.zip") as zf:
        names = set(zf.namelist())
    assert {"checks/test_standardize.py", "checks/test_dropout.py", "solutions/01_standardize/dropout.py"} <= names
    assert not any(n.startswith(("alternatives/", "attacks/")) for n in names)
    submission = {"dropout.py": (authored / "solutions" / files["dropout"]).read_text(encoding="utf-8"),
                  "standardize.py": (authored / "exercises" / files["standardize"]).read_text(encoding="utf-8")}
    doc = run_bundle(bundle / "autograder.zip", submission, tmp_path / "autograder")
    assert {t["name"]: t["status"] for t in doc["tests"]} == {"standardize": "failed", "dropout": "passed"}

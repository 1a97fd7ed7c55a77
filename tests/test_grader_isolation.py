"""Hostile submissions against the sandbox of `jaxlings grade`, in every sandbox tier this
machine has (a tier it lacks is skipped), and the trusted worker's start.

Each attack gets no points, fails with the cause its own code met, and leaves
nothing running or written behind. The course is a copy of the grader's
fixture course, so an attack that got through could not touch the repository.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from course.engine.isolation import IsolationError, choose
from test_engine_sandbox import _gone, _running
from test_grader_class import COURSE, SOLUTIONS

ROOT = Path(__file__).resolve().parents[1]
EX = "exercises/01_basics/"

READER = """
def add(a, b):
    open({path!r}).read()
    return a + b
"""
WRITER = """
def add(a, b):
    with open({path!r}, "w") as f:
        f.write({text!r})
    return a + b
"""
IMPORTER = """
def add(a, b):
    import course.progress
    return a + b
"""
GRANDCHILD = """
import os, sys
def add(a, b):
    r, w = os.pipe()
    os.set_inheritable(w, True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            code = "import os, time\\nos.write(int(os.sys.argv[1]), b'x')\\ntime.sleep(600)"
            os.execv(sys.executable, [sys.executable, "-c", code, str(w), "{marker}"])
        os._exit(0)
    os.close(w)
    os.read(r, 1)
    raise RuntimeError("a detached grandchild is running")
"""
NETWORK = """
import socket
def add(a, b):
    socket.create_connection(("127.0.0.1", {port}), timeout=5).sendall(b"answers please")
    return a + b
"""
TMP_WRITER = """
def add(a, b):
    with open({path!r}, "wb") as f:
        f.write(b"a" * (32 << 20))
    raise RuntimeError("wrote a file into /tmp")
"""
TMP_READER = """
import os
def add(a, b):
    if os.path.exists({path!r}):
        return a + b
    raise FileNotFoundError("another submission's /tmp file is not here")
"""
# The worker keeps the trusted side's compiled programs between submissions: a learner who
# could write an entry there would choose the native code the grader runs for later learners.
CACHE_POISON = """
import glob, os
def add(a, b):
    import jax
    found = [p for p in (os.environ.get("JAX_COMPILATION_CACHE_DIR"), jax.config.jax_compilation_cache_dir) if p]
    for start in (os.getcwd(), os.path.dirname(os.path.abspath(__file__)), "/tmp", "/"):
        d = start
        for _ in range(8):
            found += glob.glob(os.path.join(d, "*xla*")) + glob.glob(os.path.join(d, "slot-*", "*xla*"))
            d = os.path.dirname(d)
    for p in found:
        try:
            with open(os.path.join(p, "poisoned-entry"), "wb") as f:
                f.write(b"native code")
            return a + b
        except OSError:
            pass
    raise RuntimeError(f"no compile cache to write: {sorted(set(found))}")
"""

# Nothing a learner's process writes may reach the host's disk: one learner filling it would
# stop every other learner's grading. Its own /tmp, home and /dev/shm are in memory, bounded.
DISK_WRITER = """
import os
def add(a, b):
    private = tuple(os.path.realpath(p) for p in ("/tmp", os.environ.get("HOME", "/tmp"), "/dev/shm"))
    written = []
    for folder, dirs, _files in os.walk("/"):
        real = os.path.realpath(folder)
        if real.startswith(("/proc", "/sys")) or real.startswith(private) or folder.count("/") > 4:
            dirs[:] = []
            continue
        try:
            fd = os.open(os.path.join(folder, ".jaxlings-disk-probe"), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except OSError:
            continue
        os.close(fd)
        os.unlink(os.path.join(folder, ".jaxlings-disk-probe"))
        written.append(folder)
    if written:
        return a + b
    raise RuntimeError("no folder to write outside the private /tmp and home")
"""


@pytest.fixture(scope="module", params=["bubblewrap", "unshare"])
def attacked(request, tmp_path_factory):
    try:
        choose(request.param, grading=True)
    except IsolationError as exc:
        pytest.skip(f"{request.param} is not available here: {exc}")
    base = tmp_path_factory.mktemp("hostile")
    course = base / "course"
    shutil.copytree(COURSE, course)
    (course / ".jaxlings").mkdir()
    progress = course / ".jaxlings" / "progress.json"
    progress.write_text("{}\n")
    marker = f"jaxlings-grandchild-{secrets.token_hex(6)}"
    hog = f"/tmp/jaxlings-hog-{secrets.token_hex(6)}"
    sol_scale = (SOLUTIONS / "scale.py").read_text()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.setblocking(False)
    adds = {
        "a_solutions": READER.format(path=str(course / "solutions/01_basics/add.py")),
        "b_alternatives": READER.format(path=str(ROOT / "tests/alternatives/functional_ops.py")),
        "c_checks_read": READER.format(path=str(course / "checks/test_add.py")),
        "d_checks_write": WRITER.format(path=str(course / "checks/test_add.py"), text="def test_x():\n    pass\n"),
        "e_progress_write": WRITER.format(path=str(progress), text='{"add": "passed"}'),
        "f_progress_import": IMPORTER,
        "g_grandchild": GRANDCHILD.format(marker=marker),
        "h_network": NETWORK.format(port=server.getsockname()[1]),
        "i_tmp_writer": TMP_WRITER.format(path=hog),
        "j_tmp_reader": TMP_READER.format(path=hog),
        "k_compile_cache": CACHE_POISON,
        "l_disk_writer": DISK_WRITER,
    }
    class_dir, out = base / "class", base / "out"
    for name, source in adds.items():
        (class_dir / name / EX).mkdir(parents=True)
        (class_dir / name / EX / "add.py").write_text(source)
        (class_dir / name / EX / "scale.py").write_text(sol_scale)
    before = {p: p.read_bytes() for p in course.rglob("*") if p.is_file()}
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(course)}
    env.pop("JAXLINGS_SEED", None)
    try:
        proc = subprocess.run([sys.executable, "-m", "course", "grade", str(class_dir), "--out", str(out),
                               "--isolation", request.param, "--jobs", "1", "--exercises", "add,scale",
                               "--memory-mb", "2048", "--quiet"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        with pytest.raises(BlockingIOError):
            server.accept()
    finally:
        server.close()
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    try:
        yield dict(subs={s["id"]: s for s in report["submissions"]}, run=report["run"], course=course,
                   before=before, marker=marker, hog=hog)
    finally:
        for p in _running(marker):
            p.kill()


def test_every_attack_gets_nothing_and_fails_on_its_own_cause(attacked):
    expected = {
        "a_solutions": "FileNotFoundError", "b_alternatives": "FileNotFoundError",
        "c_checks_read": "FileNotFoundError", "d_checks_write": "FileNotFoundError",
        "e_progress_write": "FileNotFoundError", "f_progress_import": "No module named 'course.progress'",
        "g_grandchild": "a detached grandchild is running", "h_network": "Network is unreachable|Connection refused",
        "i_tmp_writer": "wrote a file into /tmp", "j_tmp_reader": "another submission's /tmp file is not here",
        "k_compile_cache": "no compile cache to write: []",
        "l_disk_writer": "no folder to write outside the private /tmp and home",
    }
    for name, needle in expected.items():
        add = attacked["subs"][name]["exercises"]["add"]
        assert add["points"] == 0 and add["cause"] == "exception", (name, add["cause"], add["message"])
        assert any(n in add["message"] for n in needle.split("|")), (name, add["message"])
        assert attacked["subs"][name]["exercises"]["scale"]["passed"], name  # honest work still counts


def test_the_report_names_a_sandbox_tier_and_its_guarantees(attacked):
    from course.engine.isolation import PIDS_MAX

    iso = attacked["run"]["isolation"]
    assert iso["tier"] in ("bubblewrap", "unshare")
    assert all(iso["guarantees"].values()), iso["guarantees"]
    # A pids cgroup per learner where `choose` made one work here (test_engine_sandbox holds
    # the tier to it), else the reason it could not.
    pids = iso["pids_cgroup"]
    assert pids == {"limit": PIDS_MAX} or (pids["limit"] is None and pids["why_not"]), pids


@pytest.mark.parametrize("pids, shown", [
    ({"limit": 528}, "each learner's processes run in a pids cgroup of their own: at most 528 tasks"),
    ({"limit": None, "why_not": "no cgroup v1 pids controller is mounted here"},
     "no pids cgroup here (no cgroup v1 pids controller is mounted here): a learner's tasks are limited by "
     "RLIMIT_NPROC alone"),
])
def test_the_summary_says_whether_each_learner_gets_a_pids_cgroup(pids, shown):
    from rich.console import Console

    from course.grader.console import summary_table

    console = Console(width=400, record=True)
    guarantees = {"network_off": True, "solutions_hidden": True, "other_submissions_hidden": True,
                  "unprivileged": True}
    summary_table([], {"tier": "unshare", "guarantees": guarantees, "pids_cgroup": pids}, "out", console=console)
    assert shown in console.export_text()


def test_nothing_is_left_running_or_written(attacked):
    assert _gone(attacked["marker"]), "a detached grandchild outlived the grading run"
    course = attacked["course"]
    after = {p: p.read_bytes() for p in course.rglob("*") if p.is_file()}
    assert after == attacked["before"]
    assert not os.path.exists(attacked["hog"])


@pytest.mark.parametrize("flags", [["-P"], []], ids=["script-like", "python-m"])
def test_a_module_planted_where_grading_starts_is_never_imported(tmp_path, flags):
    """Trusted processes start with no folder on sys.path that anyone else could write,
    `python -m course` (which puts the cwd first on sys.path) included."""
    planted = tmp_path / "cwd"
    planted.mkdir()
    touched = tmp_path / "imported"
    for name in ("jax", "optax", "numpy", "pytest", "json", "psutil", "argparse", "gettext"):
        (planted / f"{name}.py").write_text(f"open({str(touched)!r}, 'a').write('{name}\\n')\n"
                                            "raise SystemExit('planted module imported')\n")
    class_dir = tmp_path / "class"
    (class_dir / "one" / EX).mkdir(parents=True)
    (class_dir / "one" / EX / "add.py").write_text((SOLUTIONS / "add.py").read_text())
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(COURSE)}
    env.pop("JAXLINGS_SEED", None)
    # -P: like the installed `jaxlings` script, whose own folder is not the cwd.
    proc = subprocess.run([sys.executable, *flags, "-m", "course", "grade", str(class_dir), "--out",
                           str(tmp_path / "out"), "--exercises", "add", "--jobs", "1", "--quiet"],
                          cwd=planted, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not touched.exists(), touched.read_text()
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["submissions"][0]["total"] == report["submissions"][0]["max_total"]


def test_a_tier_that_is_not_a_sandbox_needs_i_understand(tmp_path):
    class_dir = tmp_path / "class"
    (class_dir / "one" / EX).mkdir(parents=True)
    (class_dir / "one" / EX / "add.py").write_text((SOLUTIONS / "add.py").read_text())
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(COURSE)}
    proc = subprocess.run([sys.executable, "-m", "course", "grade", str(class_dir), "--out", str(tmp_path / "out"),
                           "--isolation", "process", "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "--i-understand" in proc.stderr and "NOT sandboxed" in proc.stderr
    assert not (tmp_path / "out").exists()  # a refused run leaves no empty --out behind


PRIVATE_DEV = """
import os, stat, subprocess, sys
# A private mount namespace (util-linux unshare --mount): this /dev is a tmpfs of fresh nodes,
# so whatever a learner does to them, the host's /dev is never touched.
subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "jaxlings-test-dev", "/dev"], check=True)
for name, minor in (("null", 3), ("zero", 5), ("full", 7), ("random", 8), ("urandom", 9)):
    os.mknod("/dev/" + name, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    os.chmod("/dev/" + name, 0o666)
os.mkdir("/dev/shm", 0o1777)
os.chmod("/dev/shm", 0o1777)
for _ in range(2):  # a second run: nothing of the first one's learners carries over
    out = sys.argv[2] + str(_)
    proc = subprocess.run([sys.executable, "-m", "course", "grade", sys.argv[1], "--out", out, "--isolation",
                           "unshare", "--jobs", "1", "--exercises", "add", "--memory-mb", "2048", "--quiet"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(proc.stderr[-3000:])
print(oct(os.stat("/dev/null").st_mode & 0o7777))
"""

TAMPERER = """
import os
def add(a, b):
    try:
        os.chmod("/dev/null", 0)
    except OSError as exc:
        raise RuntimeError(f"chmod refused ({exc.strerror})")
    return a + b
"""


def test_a_learner_tampering_with_dev_as_root_leaves_the_next_learners_graded_normally(tmp_path):
    """Graded by root, a learner used to own the host's /dev/null (bound writable, learner mapped
    onto host uid 0): `chmod 0` gave every later learner 0, in that run and the next."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("needs root and util-linux unshare/mount")
    try:
        choose("unshare", grading=True)
    except IsolationError as exc:
        pytest.skip(f"unshare is not available here: {exc}")
    class_dir = tmp_path / "class"
    for name, source in (("a_tamperer", TAMPERER), ("b_honest", (SOLUTIONS / "add.py").read_text())):
        (class_dir / name / EX).mkdir(parents=True)
        (class_dir / name / EX / "add.py").write_text(source)
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(COURSE)}
    env.pop("JAXLINGS_SEED", None)
    proc = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable, "-c", PRIVATE_DEV,
                           str(class_dir), str(tmp_path / "out")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "0o666", proc.stdout  # the private /dev/null kept its mode
    for run in ("out0", "out1"):
        subs = {s["id"]: s for s in json.loads((tmp_path / run / "report.json").read_text())["submissions"]}
        tamper = subs["a_tamperer"]["exercises"]["add"]
        assert tamper["points"] == 0 and "chmod refused" in tamper["message"], tamper
        assert subs["b_honest"]["total"] == subs["b_honest"]["max_total"], subs["b_honest"]


def test_root_that_cannot_change_to_the_sandbox_uid_falls_back_without_a_traceback(tmp_path):
    """Root in a user namespace that maps root alone (a rootless container) cannot chown to a
    learner's uid: with --i-understand, grade and doctor --grading fall back to a tier that works
    and name why the others were passed over."""
    if shutil.which("unshare") is None:
        pytest.skip("util-linux unshare is not installed")
    class_dir = tmp_path / "class"
    (class_dir / "one" / EX).mkdir(parents=True)
    (class_dir / "one" / EX / "add.py").write_text((SOLUTIONS / "add.py").read_text())
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(COURSE), "TMPDIR": str(tmp_path)}
    env.pop("JAXLINGS_SEED", None)
    as_root = ["unshare", "--user", "--map-root-user", sys.executable, "-m", "course"]
    probe = subprocess.run([*as_root[:3], "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a user namespace here: {probe.stderr.strip()[:200]}")
    proc = subprocess.run([*as_root, "grade", str(class_dir), "--out", str(tmp_path / "out"), "--i-understand",
                           "--exercises", "add", "--jobs", "1", "--quiet"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    run = json.loads((tmp_path / "out" / "report.json").read_text())["run"]
    assert run["isolation"]["tier"] in ("unshare", "process"), run["isolation"]
    assert any(p.startswith("uid:") for p in run["isolation"]["passed_over"]), run["isolation"]
    doctor = subprocess.run([*as_root, "doctor", "--grading"], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=600)
    assert "Traceback" not in doctor.stdout + doctor.stderr, (doctor.stdout + doctor.stderr)[-3000:]
    assert "Isolation:" in doctor.stdout


def _sandbox_bases(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.glob("jaxlings-sandboxes-*"))


def test_the_sandboxes_folder_goes_with_the_last_sandbox_in_it(tmp_path, monkeypatch):
    import tempfile

    from course.engine.isolation import HostFolder

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    first, second = HostFolder("one"), HostFolder("two")
    assert _sandbox_bases(tmp_path) == [f"jaxlings-sandboxes-{os.getuid()}"]
    first.remove()
    assert _sandbox_bases(tmp_path) and second.path.is_dir()  # still in use
    second.remove()
    assert _sandbox_bases(tmp_path) == []
    third = HostFolder("three")  # made again when needed
    assert third.path.is_dir()
    third.remove()
    assert _sandbox_bases(tmp_path) == []


def _runs_as(uid: int) -> bool:
    """Whether this interpreter can be started as `uid` here (root, setpriv, a Python others may run)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    # A Python that starts Python: the grader's workers and children are started as that user too.
    nested = "import subprocess, sys; sys.exit(subprocess.run([sys.executable, '-c', 'import course']).returncode)"
    probe = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable,
                            "-c", nested], cwd="/", capture_output=True, timeout=120)
    return probe.returncode == 0


@pytest.mark.parametrize("who", ["this user", "a user who is not root"])
def test_a_grading_run_leaves_no_sandbox_folder_behind(who):
    """Under the TMPDIR it was given, a normal run leaves nothing of jaxlings: not the folder
    its sandboxes were made in, even empty."""
    import tempfile

    uid = 61000 + secrets.randbelow(900)  # a throw-away one: no sandboxes of another run under it
    prefix: list[str] = []
    if who != "this user":
        if not _runs_as(uid):
            pytest.skip("cannot run this Python as another user here")
        # The sandbox, where that user can start one; else the plain process: each tier makes its folders there.
        prefix = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    # Under /tmp, traversable: a sandbox's launcher must reach its folder.
    tmp = Path(tempfile.mkdtemp(prefix="jaxlings-test-tmp-", dir="/tmp"))
    try:
        os.chmod(tmp, 0o1777 if prefix else 0o711)
        class_dir, out = tmp / "class", tmp / "out"
        (class_dir / "one" / EX).mkdir(parents=True)
        (class_dir / "one" / EX / "add.py").write_text((SOLUTIONS / "add.py").read_text())
        for p in (class_dir, *class_dir.rglob("*")):
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
        env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(COURSE), "TMPDIR": str(tmp), "HOME": str(tmp)}
        env.pop("JAXLINGS_SEED", None)
        proc = subprocess.run([*prefix, sys.executable, "-I", "-m", "course", "grade", str(class_dir), "--out",
                               str(out), "--exercises", "add", "--jobs", "1", "--quiet",
                               *(["--i-understand"] if prefix else [])],
                              cwd="/", env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert json.loads((out / "report.json").read_text())["submissions"][0]["total"] > 0
        assert _sandbox_bases(tmp) == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

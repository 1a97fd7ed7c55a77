"""Hostile learner files against the sandbox of `jaxlings check` (CheckSession).

Each attack would help a cheat where the learner's process sees what the
learner's user can see; in the sandbox each must fail with its own clear cause
and leave nothing running or written behind. Every sandbox tier this machine
has runs (bubblewrap, user namespaces); a tier it lacks is skipped.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from course.catalog import load_catalog
from course.engine import isolation
from course.engine.isolation import IsolationError, choose
from course.engine.runner import CheckSession

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "course"


def _tier(name: str):
    try:
        return choose(name)
    except IsolationError as exc:
        pytest.skip(f"{name} is not available here: {exc}")


@pytest.fixture(scope="module", params=["bubblewrap", "unshare", "unshare-forked"])
def tier(request):
    """A sandbox tier; "unshare-forked": the unshare tier with every child forked from a zygote
    that has imported JAX (`course.engine.zygote`), as a grading worker starts them."""
    if request.param != "unshare-forked":
        yield _tier(request.param)
        return
    from course.engine.sandbox import use_zygote
    from course.engine.zygote import Zygote

    iso = _tier("unshare")
    zygote = Zygote(isolation.child_env(home=isolation.INSIDE_HOME, tmp="/tmp"))
    before = use_zygote(zygote)
    try:
        yield iso
    finally:
        use_zygote(before)
        zygote.close()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    state = root / ".jaxlings"
    state.mkdir()
    (state / "progress.json").write_text('{"version": 1, "exercises": {}}\n')
    return root


@pytest.fixture(scope="module")
def session(tier):
    with CheckSession(memory_mb=2048, isolation=tier) as s:
        yield s


@pytest.fixture
def check(course, session, monkeypatch):
    """check(source) -> ExerciseResult for the fixture exercise `fx_scale`."""
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    ex = load_catalog(course).exercise("fx_scale")

    def run(*parts: str):
        path = course / "exercises" / "01_basics" / f"attempt_{secrets.token_hex(4)}.py"
        path.write_text("\n".join(textwrap.dedent(p) for p in parts))
        try:
            return session.run(ex, learner_file=path)
        finally:
            path.unlink()

    return run


def _blocked(result, *needles: str) -> None:
    """Failed because the attack itself failed, with the reason in the message."""
    assert not result.passed, result.message
    assert result.cause == "exception", f"{result.cause}: {result.message}"
    assert any(n in result.message for n in needles), result.message


# With the reference's module in hand a cheat returns the reference's answer.
CHEAT = """
def _cheat(path, x, alpha):
    namespace = {}
    exec(open(path).read(), namespace)
    return namespace["scale"](x, alpha)
"""


def test_reading_solutions_by_path_from_course_paths_fails(check):
    result = check(CHEAT, """
        def scale(x, alpha):
            from course import paths
            return _cheat(paths.solutions_dir() / "01_basics" / "scale.py", x, alpha)
    """)
    _blocked(result, "cannot import name 'paths' from 'course' (/jaxlings/course/__init__.py)")


def test_reading_solutions_by_absolute_path_fails(check, course):
    result = check(CHEAT, f"""
        def scale(x, alpha):
            return _cheat({str(course / "solutions/01_basics/scale.py")!r}, x, alpha)
    """)
    _blocked(result, "FileNotFoundError")


def test_reading_solutions_through_proc_fails(check, course):
    target = str(course / "solutions/01_basics/scale.py")
    result = check(CHEAT, f"""
        import os
        def scale(x, alpha):
            tried = []
            for pid in ("self", "1", str(os.getppid())):
                for via in ("root", "cwd"):
                    tail = {target!r} if via == "root" else "/../solutions/01_basics/scale.py"
                    path = f"/proc/{{pid}}/{{via}}" + tail
                    tried.append(path)
                    if os.path.isfile(path):
                        return _cheat(path, x, alpha)
            raise FileNotFoundError("no way to the solutions through /proc: " + ", ".join(tried))
    """)
    _blocked(result, "no way to the solutions through /proc")


def test_walking_up_from_file_and_executable_finds_nothing(check):
    result = check(CHEAT, """
        import sys
        from pathlib import Path
        def scale(x, alpha):
            starts = [Path(__file__).resolve(), Path(sys.executable), Path(sys.executable).resolve()]
            for start in starts:
                for parent in start.parents:
                    candidate = parent / "solutions" / "01_basics" / "scale.py"
                    if candidate.is_file():
                        return _cheat(candidate, x, alpha)
            raise FileNotFoundError("no solutions above " + ", ".join(map(str, starts)))
    """)
    _blocked(result, "no solutions above")


def test_reading_hidden_checks_and_test_alternatives_fails(check, course):
    result = check(f"""
        def scale(x, alpha):
            found = []
            for path in ({str(course / "checks/test_fx_scale.py")!r}, {str(ROOT / "tests/alternatives")!r},
                         {str(ROOT / "course/checks")!r}):
                try:
                    found.append(open(path).read() if path.endswith(".py") else __import__("os").listdir(path))
                except OSError as exc:
                    raise FileNotFoundError(f"hidden: {{path}}") from exc
            return x * alpha + 1
    """)
    _blocked(result, "hidden: ")


def test_writing_into_the_checks_folder_fails_and_changes_nothing(check, course):
    target = course / "checks" / "test_fx_scale.py"
    before = target.read_text()
    result = check(f"""
        def scale(x, alpha):
            with open({str(target)!r}, "w") as f:
                f.write("def test_nothing():\\n    pass\\n")
            return x
    """)
    _blocked(result, "FileNotFoundError", "Read-only file system", "PermissionError")
    assert target.read_text() == before
    assert not (course / "checks" / "conftest.py").exists()


def test_forging_progress_fails_and_only_the_parent_writes_it(check, course):
    progress = course / ".jaxlings" / "progress.json"
    before = progress.read_text()
    forged = json.dumps({"version": 1, "exercises": {"fx_scale": {"passed": True}}})
    result = check(f"""
        def scale(x, alpha):
            try:
                from course.progress import Progress
            except ImportError as exc:
                import_error = exc
            with open({str(progress)!r}, "w") as f:
                f.write({forged!r})
            return x * alpha + 1
    """)
    _blocked(result, "FileNotFoundError", "Read-only file system")
    assert progress.read_text() == before
    result = check("""
        def scale(x, alpha):
            import course.progress
            return x * alpha + 1
    """)
    _blocked(result, "No module named 'course.progress'")


def _running(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in (proc.info["cmdline"] or []):
            found.append(proc)
    return found


def _gone(marker: str, within: float = 30.0) -> bool:
    """Processes end asynchronously after a SIGKILL: wait for them, with a deadline."""
    deadline = time.monotonic() + within
    while _running(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


GRANDCHILD = """
import os, sys
def scale(x, alpha):
    r, w = os.pipe()
    os.set_inheritable(w, True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            code = "import os, time\\nos.write(int(os.sys.argv[1]), b'x')\\ntime.sleep(600)"
            os.execv(sys.executable, [sys.executable, "-c", code, str(w), "{marker}"])
        os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"x"  # the detached grandchild is running
    return x
"""


def test_a_detached_grandchild_ends_with_the_check(check):
    marker = f"jaxlings-grandchild-{secrets.token_hex(6)}"
    try:
        result = check(GRANDCHILD.format(marker=marker))
        assert result.cause == "wrong_result", result.message  # it ran, and reached its return
        assert _gone(marker), "a detached grandchild outlived the check"
    finally:
        for proc in _running(marker):
            proc.kill()


def test_host_devices_cannot_be_changed_and_no_user_namespace_can_be_made(check):
    """The learner never owns the host's device nodes (as root, it used to be host root inside,
    and `chmod /dev/null 0` broke every later child on the host), and no nested user namespace
    gives it capabilities. The chmod asks for the mode /dev/null has: harmless were it allowed."""
    result = check("""
        import ctypes, os
        def scale(x, alpha):
            try:
                os.chmod("/dev/null", os.stat("/dev/null").st_mode & 0o7777)
                chmod = "chmod allowed"
            except OSError as exc:
                chmod = f"chmod refused ({exc.strerror})"
            libc = ctypes.CDLL(None, use_errno=True)
            nested = "nested allowed" if libc.unshare(0x10000000) == 0 else "nested refused"
            owner = "owns host root's files" if os.stat("/usr").st_uid == os.getuid() else "not host root"
            with open("/dev/null", "w") as null:
                null.write("devices still work")
            raise RuntimeError(f"{chmod}; {nested}; {owner}")
    """)
    _blocked(result, "RuntimeError")
    for needle in ("chmod refused", "nested refused", "not host root"):
        assert needle in result.message, result.message


def test_a_learner_starting_threads_in_a_loop_hits_the_limit_and_the_next_check_runs(check):
    result = check("""
        import threading
        def scale(x, alpha):
            stop = threading.Event()
            try:
                for _ in range(100_000):
                    threading.Thread(target=stop.wait, daemon=True).start()
            finally:
                stop.set()
            return x * alpha
    """)
    _blocked(result, "more threads and processes than the")
    after = check("import jax.numpy as jnp\ndef scale(x, alpha):\n    return jnp.asarray(x) * alpha + 1\n")
    assert after.passed, after.message


def test_where_a_pids_cgroup_is_in_force_the_learners_tree_runs_in_its_own_and_stops_at_its_limit(tier, course,
                                                                                                   monkeypatch):
    """The tier reports a pids cgroup only where it made one work (`choose` probes it); then
    a learner's tasks stop at the group's pids.max, far below RLIMIT_NPROC, and the group is
    gone after the check."""
    if tier.pids_cgroup is None:
        assert tier.describe()["pids_cgroup"] == {"limit": None, "why_not": tier.pids_cgroup_missing}
        pytest.skip(f"no pids cgroup here: {tier.pids_cgroup_missing}")
    assert tier.describe()["pids_cgroup"] == {"limit": isolation.PIDS_MAX}
    assert isolation.PIDS_MAX > isolation.MAX_TASKS
    monkeypatch.setattr(isolation, "PIDS_MAX", 96)  # a fresh session's children get this limit
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    ex = load_catalog(course).exercise("fx_scale")
    path = course / "exercises" / "01_basics" / f"attempt_{secrets.token_hex(4)}.py"
    path.write_text(textwrap.dedent("""
        import threading
        def scale(x, alpha):
            group = [g.split(":", 2)[2] for g in open("/proc/self/cgroup").read().splitlines()
                     if "pids" in g.split(":", 2)[1].split(",")]
            stop, started = threading.Event(), 0
            try:
                for _ in range(10_000):
                    threading.Thread(target=stop.wait, daemon=True).start()
                    started += 1
            except RuntimeError:
                pass
            finally:
                stop.set()
            raise ValueError(f"group {group} started {started}")
    """))
    try:
        with CheckSession(memory_mb=2048, isolation=tier, warm=False) as session:
            result = session.run(ex, learner_file=path)
    finally:
        path.unlink()
    assert result.cause == "exception", result.message
    import re

    found = re.search(r"group \['(/[^']*)'\] started (\d+)", result.message)
    assert found, result.message
    group, started = Path(found.group(1)), int(found.group(2))
    assert group.name.startswith(f"{isolation.CGROUP_PREFIX}{os.getuid()}-"), group
    assert 0 < started < 96 < isolation.MAX_TASKS, started  # the cgroup stopped it, not RLIMIT_NPROC
    assert not (Path(tier.pids_cgroup) / group.name).exists()  # removed with the sandbox


def test_the_system_is_read_only_the_learner_holds_no_capability_and_sees_only_its_own_processes(check):
    result = check("""
        import os, sys
        def scale(x, alpha):
            problems = []
            for folder in ("/usr", "/usr/lib", sys.prefix, os.path.dirname(os.__file__), "/"):
                try:
                    with open(os.path.join(folder, "jaxlings-planted"), "w"):
                        problems.append(f"{folder} is writable")
                except OSError:
                    pass
            caps = [line.split()[1] for line in open("/proc/self/status") if line.startswith("CapEff:")]
            if os.getuid() == 0 or caps != ["0000000000000000"]:
                problems.append(f"uid {os.getuid()}, capabilities {caps}")
            pids = [p for p in os.listdir("/proc") if p.isdigit()]
            if len(pids) > 4 or os.getpid() > 16:  # the namespace's init, the check's process, little else
                problems.append(f"sees processes {pids}")
            raise RuntimeError("; ".join(problems) or "all held")
    """)
    _blocked(result, "all held")


# Every guarantee the sandbox tiers print (GUARANTEES, in the report and the notice) and the
# test here or in test_grader_isolation.py that holds the tier to it, on that tier.
GUARANTEE_TESTS = {
    "network_off": "test_network_is_off",
    "solutions_hidden": "test_reading_solutions_by_absolute_path_fails",
    "other_submissions_hidden": "test_tmp_is_private_to_each_run_and_limited",
    "host_devices_unchangeable": "test_host_devices_cannot_be_changed_and_no_user_namespace_can_be_made",
    "no_nested_user_namespaces": "test_host_devices_cannot_be_changed_and_no_user_namespace_can_be_made",
    "tasks_limited": "test_a_learner_starting_threads_in_a_loop_hits_the_limit_and_the_next_check_runs",
    "system_read_only": "test_the_system_is_read_only_the_learner_holds_no_capability_and_sees_only_its_own_processes",
    "unprivileged": "test_the_system_is_read_only_the_learner_holds_no_capability_and_sees_only_its_own_processes",
    "own_pid_namespace": "test_the_system_is_read_only_the_learner_holds_no_capability_and_sees_only_its_own_processes",
    "private_tmp": "test_tmp_is_private_to_each_run_and_limited",
    "processes_end_with_check": "test_a_detached_grandchild_ends_with_the_check",
    "progress_unreachable": "test_forging_progress_fails_and_only_the_parent_writes_it",
}


@pytest.mark.parametrize("tier_name", isolation.SANDBOX_TIERS)
def test_every_guarantee_a_sandbox_tier_prints_has_a_test_on_that_tier(tier_name):
    promised = {k for k, v in isolation.GUARANTEES[tier_name].items() if v}
    assert promised == set(GUARANTEE_TESTS), promised ^ set(GUARANTEE_TESTS)
    for name in GUARANTEE_TESTS.values():
        assert name in globals(), name  # parametrised over `tier`: run on every sandbox tier this machine has


def test_network_is_off(check):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        port = server.getsockname()[1]
        result = check(f"""
            import socket
            def scale(x, alpha):
                socket.create_connection(("127.0.0.1", {port}), timeout=5).sendall(b"answers please")
                return x * alpha + 1
        """)
        with pytest.raises(BlockingIOError):
            server.accept()
    _blocked(result, "Network is unreachable", "Connection refused")


def test_tmp_is_private_to_each_run_and_limited(check):
    name = f"/tmp/jaxlings-hog-{secrets.token_hex(6)}"
    writer = check(f"""
        def scale(x, alpha):
            with open({name!r}, "wb") as f:
                f.write(b"a" * (64 << 20))
            with open({name!r} + "-more", "wb") as f:
                for _ in range(1024):
                    f.write(b"b" * (1 << 20))  # past the private /tmp's size
            return x
    """)
    _blocked(writer, "No space left on device")
    reader = check(f"""
        import os
        def scale(x, alpha):
            if os.path.exists({name!r}):
                return x * alpha + 1
            raise FileNotFoundError("the other run's file is not here")
    """)
    _blocked(reader, "the other run's file is not here")
    assert not os.path.exists(name) and not os.path.exists(name + "-more")


def test_the_child_sees_only_what_it_is_allowed(check, course):
    """Not an attack: the environment and the file system the learner's code lives in."""
    result = check(f"""
        import os, sys
        def scale(x, alpha):
            named = [v for v in os.environ.values() if {str(course)!r} in v or {str(ROOT)!r} in v]
            problems = []
            if named:
                problems.append(f"environment names the course: {{named}}")
            if os.getuid() == 0:
                problems.append("runs as root")
            if os.getcwd() != os.environ["HOME"] or not os.access(os.getcwd(), os.W_OK):
                problems.append("cwd is not the private home")
            engine = os.path.dirname(sys.modules["course.engine"].__file__)
            if os.access(engine, os.W_OK) or os.access(__file__, os.W_OK):
                problems.append("course/engine or the exercise file is writable")
            if sorted(os.listdir(os.path.dirname(engine))) != ["__init__.py", "engine"]:
                problems.append(f"course/ holds {{os.listdir(os.path.dirname(engine))}}")
            outside = [m for m in sys.modules if m.startswith("course.") and not m.startswith("course.engine")]
            if outside:
                problems.append(f"the child imported {{outside}}")
            if len([p for p in os.listdir("/proc") if p.isdigit()]) > 4:
                problems.append("other processes are visible")
            if problems:
                raise AssertionError("; ".join(problems))
            return x * alpha + 1
    """)
    assert result.passed, result.message


def test_nothing_is_left_behind_on_the_host(course, tier, monkeypatch):
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    ex = load_catalog(course).exercise("fx_scale")
    created = []
    make = isolation.Isolation.sandbox

    def recording(self, **kw):
        box = make(self, **kw)
        created.append(box.folder.path)
        return box

    monkeypatch.setattr(isolation.Isolation, "sandbox", recording)
    with CheckSession(warm=False, isolation=tier) as session:
        result = session.run(ex, learner_file=ex.solution_path())
    assert result.passed, result.message
    assert created, "the run used no sandbox"
    assert not [p for p in created if p.exists()], "the run's sandbox folder was not removed"


def test_folders_of_a_run_killed_with_sigkill_are_swept_by_the_next():
    code = ("from course.engine.isolation import HostFolder\nimport sys, time\n"
            "f = HostFolder('probe-child')\n(f.path / 'inbox').mkdir()\nprint(f.path, flush=True)\ntime.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        path = Path(proc.stdout.readline().strip())
        assert path.is_dir()
        assert path.name not in isolation.sweep(), "a live run's folder must be kept"
    finally:
        proc.kill()
        proc.wait()
    assert path.name in isolation.sweep()
    assert not path.exists()


def test_the_fallback_says_so_in_one_line():
    iso = choose("process")
    assert not iso.sandboxed
    line = iso.notice()
    assert "\n" not in line and "NOT sandboxed" in line and "jaxlings doctor" in line
    assert isolation.GUARANTEES["process"]["solutions_hidden"] is False


def test_weak_grading_tiers_need_consent():
    with pytest.raises(IsolationError, match="--i-understand"):
        choose("process", grading=True, allow_weak=False)
    assert choose("process", grading=True, allow_weak=True).tier == "process"


def test_the_real_course_functional_ops_cannot_reach_solutions_or_alternatives(tmp_path, monkeypatch):
    iso = _tier("unshare") if shutil.which("bwrap") is None else _tier("bubblewrap")
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    monkeypatch.delenv("JAXLINGS_COURSE_ROOT", raising=False)
    ex = load_catalog().exercise("functional_ops")
    learner = tmp_path / "functional_ops.py"
    relative = (Path("solutions") / ex.file).as_posix()
    learner.write_text(textwrap.dedent(f"""
        import sys
        from pathlib import Path
        def _load():
            candidates = [{str(ROOT / "tests/alternatives/functional_ops.py")!r}]
            for start in (Path(sys.executable), Path(sys.executable).resolve(), Path(__file__).resolve()):
                candidates += [str(p / {relative!r}) for p in start.parents]
            for c in candidates:
                if Path(c).is_file():
                    namespace = {{}}
                    exec(Path(c).read_text(), namespace)
                    return namespace
            raise FileNotFoundError("no solution or alternative is reachable")
        SOLVED = _load()
        globals().update({{k: v for k, v in SOLVED.items() if not k.startswith("__")}})
    """))
    with CheckSession(warm=False, isolation=iso) as session:
        result = session.run(ex, learner_file=learner)
    assert not result.passed
    assert result.cause == "exception", result.message
    assert "no solution or alternative is reachable" in result.message


def test_the_app_and_the_cli_say_when_checks_are_not_sandboxed(tmp_path):
    from course.tui.services import Services

    services = Services()
    services._session = CheckSession(warm=False, isolation=choose("process"))
    try:
        assert "NOT sandboxed" in services.isolation_notice()
    finally:
        services.close()
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(course), "JAXLINGS_ISOLATION": "process"}
    env.pop("JAXLINGS_WORKSPACE", None)
    proc = subprocess.run([sys.executable, "-m", "course", "check", "fx_scale"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    notices = [line for line in proc.stderr.splitlines() if line.startswith("Isolation:")]
    assert len(notices) == 1 and "NOT sandboxed" in notices[0], proc.stderr


NON_ROOT = """
import os, subprocess, sys
from course.engine.isolation import Isolation, probe
assert os.getuid() != 0
iso = Isolation("unshare")
why = probe(iso)
if why is not None:
    print("REFUSED", why)
    sys.exit(0)
box = iso.sandbox()
code = "import os, jax.numpy as jnp; print(os.getuid(), float(jnp.ones(3).sum()))"
out = subprocess.run(box.command([sys.executable, "-I", "-c", code]), cwd=box.cwd, env=box.env(),
                     capture_output=True, text=True)
box.close()
print(out.returncode, out.stdout.strip(), out.stderr[-300:])
"""


def test_the_namespace_tier_needs_no_root(tmp_path):
    """Run as a user without any privilege (a user namespace of its own, uid 1234, no capabilities
    on the host): the sandbox still starts and the learner's code runs as uid 1000 inside.

    Started by root, that user namespace maps uid 1234 onto host root: the learner would own
    host root's files, which the sandbox refuses, naming why."""
    if shutil.which("unshare") is None:
        pytest.skip("util-linux unshare is not installed")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.run(["unshare", "--user", "--map-user=1234", "--map-group=1234", sys.executable, "-c", NON_ROOT],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 and "unshare:" in proc.stderr:
        pytest.skip(f"cannot become an unprivileged user here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    if os.geteuid() == 0:
        assert proc.stdout.startswith("REFUSED") and "host root outside" in proc.stdout, proc.stdout + proc.stderr
    else:
        assert proc.stdout.split()[:3] == ["0", "1000", "3.0"], proc.stdout + proc.stderr


def test_course_files_inside_a_bound_python_folder_are_covered(tier, monkeypatch):
    """A non-editable install puts `course/` (checks included) into site-packages, which the
    sandbox binds: the course's own folders there are covered by empty ones."""
    from course.engine import allowed

    real = allowed.python_paths()
    monkeypatch.setattr(allowed, "python_paths", lambda: (str(ROOT), *real))
    box = tier.sandbox()
    try:
        code = ("import os, sys\n"
                "print(sorted(p for p in sys.argv[1:] if os.path.exists(p)))\n")
        probes = [str(ROOT / p) for p in ("README.md", "course/checks/test_functional_ops.py", "course/progress.py",
                                          "solutions/01_ecosystem/functional_ops.py",
                                          "tests/alternatives/functional_ops.py")]
        assert all(Path(p).is_file() for p in probes)
        proc = subprocess.run(box.command([sys.executable, "-I", "-S", "-c", code, *probes]), cwd=box.cwd,
                              env=box.env(), capture_output=True, text=True, timeout=120)
    finally:
        box.close()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == repr([str(ROOT / "README.md")]), proc.stdout


def test_doctor_names_the_tier_in_force_for_check_and_grade():
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAXLINGS_")}
    proc = subprocess.run([sys.executable, "-m", "course", "doctor", "--grading", "--json"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    report = json.loads(proc.stdout)["isolation"]
    expected = isolation.for_checks().tier
    assert report["check"][0].startswith(f"Isolation: {expected} ("), report
    assert report["grade"][0].startswith("Isolation: "), report
    if expected != "bubblewrap":
        # Installed and passed over (as root), it is not to be installed again; missing, it is.
        installed = shutil.which("bwrap") is not None
        assert any("apt-get install bubblewrap" in line for line in report["check"]) is not installed, report


def _pausing_probe(module, names):
    import time

    from course.engine.child import pause

    waited = []
    for name in names:
        start = time.perf_counter()
        pause(name)
        waited.append(time.perf_counter() - start)
    return waited


def test_pauses_last_as_long_as_the_parent_says_and_only_the_parent_knows_how_long(tmp_path):
    """The channel the timing check stands on: the child asks for a named wait, and the parent
    answers after a duration it never sent; a name it did not offer, or one asked twice, kills the run."""
    from course.engine.check_run import _probe_source
    from course.engine.sandbox import LearnerProcess, child_environment, encode_args

    learner = tmp_path / "mod.py"
    learner.write_text("x = 1\n")
    proc = LearnerProcess(env=child_environment(None, None))
    try:
        deadline = time.monotonic() + 60
        proc.request({"op": "load", "path": str(learner), "module": "mod"}, deadline, during="loading")
        msg = {"op": "probe", "fn": "_pausing_probe", "source": _probe_source(_pausing_probe),
               **encode_args((["a", "b"],), {})}
        start = time.monotonic()
        waited = proc.request(msg, deadline, during="probing", pauses={"a": 0.3, "b": 0.05})
        assert waited[0] >= 0.3 and waited[1] >= 0.05 and time.monotonic() - start >= 0.35
        assert "0.3" not in json.dumps(msg)
        from course.engine.sandbox import LearnerFailure

        again = {**msg, **encode_args((["a", "a"],), {})}
        with pytest.raises(LearnerFailure, match="unknown wait"):
            proc.request(again, deadline, during="probing", pauses={"a": 0.01})
    finally:
        proc.close()


def test_a_sweep_removes_the_pids_cgroups_of_sandboxes_whose_folder_is_gone():
    """Groups share the machine's hierarchy while folders live under each run's TMPDIR: a
    sweep removes the groups of its own dead folders and never the (still empty) group of a
    sandbox starting under another temporary folder."""
    base, why = isolation.pids_cgroup_base()
    if base is None:
        pytest.skip(f"no pids cgroup here: {why}")
    folder = isolation.HostFolder("unshare-child")  # a live sandbox's folder: its group is kept
    alive = isolation.PidsCgroup(Path(base), isolation.cgroup_name(folder.path), 8)
    gone = folder.path.parent / f"unshare-child-gone{secrets.token_hex(4)}"
    dead = isolation.PidsCgroup(Path(base), isolation.cgroup_name(gone), 8)
    elsewhere = Path("/nonexistent-tmp") / folder.path.parent.name / f"unshare-child-there{secrets.token_hex(4)}"
    other = isolation.PidsCgroup(Path(base), isolation.cgroup_name(elsewhere), 8)
    try:
        assert (alive.path / "pids.max").read_text().strip() == "8"
        isolation.sweep_cgroups(folder.path.parent, base)  # what every HostFolder's sweep does
        assert alive.path.is_dir() and not dead.path.exists() and other.path.is_dir()
    finally:
        assert alive.remove() and dead.remove() and other.remove()
        folder.remove()
    assert not alive.path.exists()


def test_a_sandbox_that_cannot_start_is_the_checks_failure_not_the_learners(tier, course, monkeypatch):
    """The launcher gives up before Python starts (here: its pids cgroup vanished): the
    result says the sandbox failed and that the learner's code did not run."""
    if tier.pids_cgroup is None:
        pytest.skip(f"no pids cgroup here: {tier.pids_cgroup_missing}")
    monkeypatch.setattr(isolation.PidsCgroup, "procs", property(lambda self: str(self.path / "gone" / "cgroup.procs")))
    monkeypatch.delenv("JAXLINGS_WORKSPACE", raising=False)
    ex = load_catalog(course).exercise("fx_scale")
    with CheckSession(memory_mb=2048, isolation=tier, warm=False) as session:
        result = session.run(ex, learner_file=course / "solutions" / ex.file)
    assert not result.passed and result.cause == "check_error", result
    assert "sandbox for your code could not start" in result.message and "pids cgroup" in result.message
    assert "os._exit" not in result.message

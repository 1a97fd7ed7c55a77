"""The per-workspace check server behind `jaxlings check`: started on demand, reused,
private to its user, replaced when out of date, and never needed for a verdict."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from course.engine import server

FIXTURE = Path(__file__).parent / "fixtures" / "course"
ROOT = Path(__file__).resolve().parents[1]

CORRECT = "import jax.numpy as jnp\n\ndef scale(x, alpha):\n    return jnp.asarray(x) * alpha + 1\n"
WRONG = "def scale(x, alpha):\n    return x\n"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    shutil.copytree(FIXTURE, root, dirs_exist_ok=True)
    ws = tmp_path_factory.mktemp("ws")
    (ws / "exercises" / "01_basics").mkdir(parents=True)
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(root), "JAXLINGS_WORKSPACE": str(ws),
           "JAXLINGS_SERVER": "1", "JAXLINGS_SERVER_IDLE": "300"}
    env.pop("JAXLINGS_PROGRESS", None)
    yield ws, env
    subprocess.run([sys.executable, "-c", "from course.engine import server; server.stop()"], env=env,
                   cwd=ROOT, timeout=60)


def _check(env, ws, source):
    (ws / "exercises" / "01_basics" / "scale.py").write_text(source)
    return subprocess.run([sys.executable, "-m", "course", "check", "fx_scale", "--json"], env=env, cwd=ws,
                          capture_output=True, text=True, timeout=600)


def _ping(ws):
    return server._call(server.server_dir(ws / ".jaxlings"), {"op": "ping"}, 30)


def test_checks_go_through_one_private_server(workspace):
    ws, env = workspace
    first = _check(env, ws, CORRECT)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "unavailable" not in first.stderr
    pid = _ping(ws)["pid"]

    second = _check(env, ws, WRONG)
    assert second.returncode == 1 and '"cause": "wrong_result"' in second.stdout, second.stdout + second.stderr
    assert _ping(ws)["pid"] == pid  # the same warm server answered

    folder = server.server_dir(ws / ".jaxlings")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "token").stat().st_mode) == 0o600
    # A peer without the token gets no answer at all.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(folder / "check.sock"))
        server._send(sock, {"op": "ping", "token": "guess"})
        sock.settimeout(30)
        assert sock.recv(1) == b""


def test_a_changed_environment_gets_a_new_server(workspace):
    ws, env = workspace
    assert _check(env, ws, CORRECT).returncode == 0
    old = _ping(ws)["pid"]
    changed = {**env, "JAXLINGS_MEMORY_MB": "3000"}
    result = _check(changed, ws, CORRECT)
    assert result.returncode == 0, result.stdout + result.stderr
    new = server._call(server.server_dir(ws / ".jaxlings"), {"op": "ping"}, 30)
    assert new["pid"] != old


def test_without_a_server_the_check_runs_here_and_says_so(workspace, tmp_path):
    ws, env = workspace
    # A folder where the server's socket cannot be made: the check still gets its verdict.
    blocked = tmp_path / "ws"
    shutil.copytree(ws / "exercises", blocked / "exercises")
    (blocked / ".jaxlings").mkdir()
    (blocked / ".jaxlings" / "server").write_text("not a folder")
    result = _check({**env, "JAXLINGS_WORKSPACE": str(blocked)}, blocked, WRONG)
    assert result.returncode == 1 and '"cause": "wrong_result"' in result.stdout, result.stdout + result.stderr
    assert "check server is unavailable" in result.stderr and "checking in this process" in result.stderr


# -- nothing outlives its workspace ---------------------------------------------------


def _tree(root: int) -> list[int]:
    """`root` and every process below it, from the parent ids in /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat_line = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            ppid = int(stat_line[stat_line.rfind(b")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, ()))
    return tree


def _alive(pids: list[int]) -> list[int]:
    left = []
    for pid in pids:
        try:
            stat_line = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            continue
        if stat_line[stat_line.rfind(b")") + 2:][:1] != b"Z":  # a zombie has ended; its parent reaps it
            left.append(pid)
    return left


def _wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def _own_workspace(tmp_path, **extra_env):
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    ws = tmp_path / "ws"
    (ws / "exercises" / "01_basics").mkdir(parents=True)
    env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(root), "JAXLINGS_WORKSPACE": str(ws),
           "JAXLINGS_SERVER": "1", "JAXLINGS_SERVER_IDLE": "300", "XDG_CACHE_HOME": str(tmp_path / "cache"),
           **extra_env}
    env.pop("JAXLINGS_PROGRESS", None)
    return ws, env


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
@pytest.mark.parametrize("how", ["workspace deleted", "state folder replaced"])
def test_a_server_and_its_warm_children_end_when_their_workspace_goes(tmp_path, how):
    ws, env = _own_workspace(tmp_path)
    first = _check(env, ws, CORRECT)
    assert first.returncode == 0 and "unavailable" not in first.stderr, first.stdout + first.stderr
    pid = _ping(ws)["pid"]
    tree = _tree(pid)
    assert len(tree) > 1, "a warm server keeps a learner child ready"
    try:
        if how == "workspace deleted":
            shutil.rmtree(ws)
        else:
            shutil.rmtree(ws / ".jaxlings")
            (ws / ".jaxlings").mkdir()
        assert _wait_until(lambda: not _alive(tree), 60), f"still running: {_alive(tree)} of {tree}"
    finally:
        for left in _alive(tree):
            os.kill(left, 9)
    if how == "state folder replaced":  # the next check starts a server of its own
        again = _check(env, ws, CORRECT)
        assert again.returncode == 0 and "unavailable" not in again.stderr, again.stdout + again.stderr
        assert _ping(ws)["pid"] != pid
        server.stop(ws / ".jaxlings")


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the process's maps from /proc")
def test_an_unused_server_cools_without_jax_or_children_and_warms_again(tmp_path):
    ws, env = _own_workspace(tmp_path, JAXLINGS_SERVER_WARM="2")
    first = _check(env, ws, CORRECT)
    assert first.returncode == 0 and "unavailable" not in first.stderr, first.stdout + first.stderr
    pid = _ping(ws)["pid"]
    try:
        assert _wait_until(lambda: not _ping(ws)["warm"], 120)
        assert _ping(ws)["pid"] == pid  # the same server, on the same socket
        assert _wait_until(lambda: _tree(pid) == [pid], 30), "its warm children ended"
        maps = Path(f"/proc/{pid}/maps").read_text()
        assert "jaxlib" not in maps and "xla_extension" not in maps, "a cool server has not loaded JAX"

        second = _check(env, ws, WRONG)
        assert second.returncode == 1 and '"cause": "wrong_result"' in second.stdout, second.stdout + second.stderr
        assert "unavailable" not in second.stderr
        assert _ping(ws)["pid"] == pid
    finally:
        server.stop(ws / ".jaxlings")


STREAMED = """
import json
from course.catalog import load_catalog
from course.engine.server import check_exercise

seen = []
result = check_exercise(load_catalog().exercise("fx_scale"), seed=5,
                        on_outcome=lambda o: seen.append([o.name, o.outcome, o.cause]))
print(json.dumps({"seen": seen, "checks": [[c.name, c.outcome, c.cause] for c in result.checks]}))
"""


@pytest.mark.parametrize("through", ["server", "this process"])
def test_each_tests_outcome_is_told_as_it_lands(workspace, through):
    """`check`, `watch` and the app show each test's verdict before the whole check is over: the
    outcomes streamed (through the server, or from a check run here) are the verdict's, in order."""
    ws, env = workspace
    (ws / "exercises" / "01_basics" / "scale.py").write_text(WRONG)
    env = {**env, "JAXLINGS_SERVER": "1" if through == "server" else "0"}
    proc = subprocess.run([sys.executable, "-I", "-c", STREAMED], env=env, cwd=ws, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "unavailable" not in proc.stderr, proc.stderr  # the server answered, or was turned off
    import json

    told = json.loads(proc.stdout.strip().splitlines()[-1])
    assert told["seen"] == told["checks"]
    assert [outcome for _, outcome, _ in told["seen"]] == ["failed", "failed"]
    assert told["seen"][0][2] == "wrong_result"


def test_a_terminal_sees_each_test_land_before_the_verdict(workspace):
    """On a terminal, `jaxlings check` prints each test's outcome as it lands (the first failure
    with its message) above its "checking…" line, then the verdict."""
    sys.path.insert(0, str(Path(__file__).parent))
    from pty_run import PtyRun

    ws, env = workspace
    (ws / "exercises" / "01_basics" / "scale.py").write_text(WRONG)
    run = PtyRun(["check", "fx_scale"], {**env, "TERM": "xterm-256color", "JAXLINGS_LANG": "en"}, cols=80, rows=24)
    landed = run.expect("✗ test_scale_matches: Wrong result")
    second = run.expect("✗ test_scale_under_jit", landed)
    run.expect("not passed yet", second)
    assert run.finish() == 1
    shown = run.plain()
    first = shown[shown.index("✗ test_scale_matches"):shown.index("✗ test_scale_under_jit")]
    assert len(first.strip().splitlines()) > 1  # the first failure comes with its message

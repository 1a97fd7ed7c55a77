"""The per-workspace check server behind `jaxlings check`: started on demand, reused,
private to its user, replaced when out of date, and never needed for a verdict."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
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

"""Children forked from a zygote (`course.engine.zygote`), as a grading worker starts them.

The sandbox tests run every attack against forked children too (`test_engine_sandbox.py`,
tier "unshare-forked"). Here: what forking adds. The zygote must never hold anything of a
learner's, since every later child is a copy of it; a forked child must end the way a fresh
one does, with the same cause; its memory is the learner's own, not the zygote's pages its
launcher maps; and nothing forked outlives the worker that asked for it.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from course.engine import isolation
from course.engine.checking import LearnerFailure
from course.engine.isolation import IsolationError, choose
from course.engine.sandbox import LearnerProcess, encode_args, use_zygote
from course.engine.zygote import ForkedProcess, Zygote

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tier():
    try:
        return choose("unshare")
    except IsolationError as exc:
        pytest.skip(f"unshare is not available here: {exc}")


def _sandbox_env() -> dict[str, str]:
    return isolation.child_env(home=isolation.INSIDE_HOME, tmp="/tmp")


@pytest.fixture(scope="module")
def zygote(tier):
    z = Zygote(_sandbox_env())
    assert z.wait_ready(), "the zygote did not start"
    yield z
    z.close()


def _child(tier, zygote, *, memory_mb=2048, extra_env=None) -> LearnerProcess:
    before = use_zygote(zygote)
    try:
        box = tier.sandbox()
        return LearnerProcess(env=box.env(extra_env or {}), sandbox=box, memory_mb=memory_mb)
    finally:
        use_zygote(before)


def _call(proc: LearnerProcess, tmp_path: Path, source: str, *, timeout: float = 60.0):
    learner = tmp_path / f"learner_{secrets.token_hex(3)}.py"
    learner.write_text(textwrap.dedent(source))
    deadline = time.monotonic() + timeout
    proc.request({"op": "load", "path": proc.stage(learner)}, time.monotonic() + 60, during="loading")
    return proc.request({"op": "call", "name": "f", **encode_args((), {})}, deadline, during="calling f")


def _memory_of(pid: int) -> bytes:
    """Every readable private mapping of process `pid` (this test runs as its owner or root)."""
    chunks = []
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if not fields[1].startswith("r") or end - start > 1 << 30:
                continue
            if len(fields) > 5 and fields[5].startswith("/") and not fields[5].startswith("/dev/zero"):
                continue  # a file's pages: the same in every process that maps it
            try:
                mem.seek(start)
                chunks.append(mem.read(end - start))
            except (OSError, ValueError, OverflowError):
                pass
    return b"".join(chunks)


def test_a_forked_child_runs_in_the_sandbox_without_importing_the_libraries_again(tier, zygote, tmp_path):
    proc = _child(tier, zygote)
    try:
        assert isinstance(proc.proc, ForkedProcess)
        started = time.monotonic()
        proc.wait_ready(time.monotonic() + 60)
        ready_in = time.monotonic() - started
        seen = _call(proc, tmp_path, """
            import os, sys, jax
            def f():
                status = open("/proc/self/status").read()
                caps = {l.split()[0]: l.split()[1] for l in status.splitlines() if l.startswith("Cap")}
                return [os.getuid(), caps["CapEff:"], caps["CapPrm:"], caps["CapAmb:"],
                        sys.modules["__main__"].__file__, open("/proc/self/cmdline").read(),
                        [os.path.exists(p) for p in HOST_FOLDERS], float(jax.numpy.ones(3).sum())]
        """.replace("HOST_FOLDERS", repr([str(ROOT / "course"), str(ROOT / "solutions")])))
    finally:
        proc.close()
    uid, eff, prm, amb, main, cmdline, host_folders, total = seen
    assert uid == 1000 and int(eff, 16) == int(prm, 16) == int(amb, 16) == 0, seen
    assert main == f"{isolation.INSIDE_ROOT}/course/engine/child.py"
    assert "/course" not in cmdline and "zygote" not in cmdline, cmdline  # the interpreter may be in a venv
    assert host_folders == [False, False]
    assert total == 3.0
    # Not a timing test: a fresh child imports JAX (about 2 s of CPU); this one must not.
    assert ready_in < 30


FACTS = """
import ctypes, os, re, resource, sys
def f():
    libc = ctypes.CDLL(None)
    status = open("/proc/self/status").read()
    fds = {n: re.sub(r"[0-9]+", "N", os.readlink("/proc/self/fd/" + n)) for n in os.listdir("/proc/self/fd")
           if os.path.exists("/proc/self/fd/" + n)}
    return {
        "ids": [os.getuid(), os.geteuid(), os.getgid(), os.getgroups()],
        "caps": sorted(l for l in status.splitlines() if l.startswith(("Cap", "NoNewPrivs", "Seccomp"))),
        "dumpable": libc.prctl(3, 0, 0, 0, 0),
        "own /proc files": os.stat("/proc/self/environ").st_uid,
        "fds": fds,
        "environ": sorted(os.environ.items()),
        "cwd": os.getcwd(),
        "path": sys.path,
        "main": sys.modules["__main__"].__file__,
        "limits": [resource.getrlimit(r) for r in (resource.RLIMIT_DATA, resource.RLIMIT_NPROC)],
        "pid": os.getpid(),
        "tmp": os.listdir("/tmp"),
    }
"""


def test_a_forked_child_is_in_the_state_a_fresh_child_is_in(tier, zygote, tmp_path):
    """What `execve` would have done for a fresh child (drop capabilities, make the process
    dumpable again, close the launcher's close-on-exec pipes), done for a forked one."""
    seen = {}
    for forked in (True, False):
        proc = _child(tier, zygote if forked else None)
        try:
            assert isinstance(proc.proc, ForkedProcess) is forked
            seen[forked] = _call(proc, tmp_path, FACTS)
        finally:
            proc.close()
    assert seen[True] == seen[False], {k: (seen[True][k], seen[False][k]) for k in seen[True]
                                       if seen[True][k] != seen[False][k]}


def test_the_zygote_never_holds_what_a_child_was_told(tier, zygote, tmp_path):
    """Every later child (the next learner's) is a copy of the zygote: a child's configuration
    (its environment, its sandbox's folders, its learner's file name) goes to the fork alone."""
    token = "jaxlings-zygote-" + secrets.token_hex(8)
    proc = _child(tier, zygote, extra_env={"XLA_FLAGS": f"--xla_dump_to=/tmp/{token}"})
    try:
        assert isinstance(proc.proc, ForkedProcess)
        proc.wait_ready(time.monotonic() + 60)
        launcher_memory = _memory_of(proc.proc.pid)
        zygote_memory = _memory_of(zygote.proc.pid)
    finally:
        proc.close()
    assert token.encode() in launcher_memory  # the scan finds it where it is
    assert token.encode() not in zygote_memory


FAULTS = {
    "exit": ("import os\ndef f():\n    os._exit(3)\n", "exit"),
    "crash": ("import os, signal\ndef f():\n    os.kill(os.getpid(), signal.SIGSEGV)\n", "crash"),
    "timeout": ("def f():\n    while True:\n        pass\n", "timeout"),
    "memory": ("def f():\n    blocks = []\n    while True:\n        blocks.append(bytearray(64 << 20))\n",
               "out_of_memory"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_forked_child_fails_with_the_cause_a_fresh_child_gets(tier, zygote, tmp_path, fault):
    source, cause = FAULTS[fault]
    causes = {}
    for forked in (True, False):
        proc = _child(tier, zygote if forked else None, memory_mb=1024)
        assert isinstance(proc.proc, ForkedProcess) is forked
        try:
            proc.wait_ready(time.monotonic() + 60)
            with pytest.raises(LearnerFailure) as failure:
                _call(proc, tmp_path, source, timeout=5.0)
            causes[forked] = failure.value.cause
        finally:
            proc.close()
        assert proc.proc.poll() is not None, "the child's process outlived its close"
    assert causes == {True: cause, False: cause}


def test_a_forked_childs_memory_is_the_learners_not_the_zygotes(tier, zygote, tmp_path):
    """The launcher and the namespace's init are forks of the zygote and map what it imported
    (about 85 MiB each here, against 10-13 MiB for a fresh launcher's): counting them would
    stop a learner about 150 MiB short of the limit a fresh child gets. The child (about
    180 MiB once ready) holds 760 MiB more: within 1 GiB only if they are not counted."""
    proc = _child(tier, zygote, memory_mb=1024)
    try:
        proc.wait_ready(time.monotonic() + 60)
        held = _call(proc, tmp_path, """
            import time
            def f():
                block = bytearray(760 << 20)
                for i in range(0, len(block), 4096):
                    block[i] = 1
                time.sleep(1.0)  # the parent's memory watch runs while it waits for the reply
                return len(block) >> 20
        """)
    finally:
        proc.close()
    assert held == 760


WORKER = """
import sys, time
from course.engine import isolation
from course.engine.sandbox import LearnerProcess, use_zygote
from course.engine.zygote import Zygote
iso = isolation.choose("unshare")
z = Zygote(isolation.child_env(home=isolation.INSIDE_HOME, tmp="/tmp"))
use_zygote(z)
box = iso.sandbox()
proc = LearnerProcess(env=box.env({"XLA_FLAGS": sys.argv[1]}), sandbox=box)
proc.wait_ready(time.monotonic() + 60)
print(z.proc.pid, proc.proc.pid, flush=True)
time.sleep(600)
"""


def test_nothing_forked_outlives_a_worker_killed_with_sigkill(tier, tmp_path):
    marker = "--xla_dump_to=/tmp/marker-" + secrets.token_hex(6)
    worker = subprocess.Popen([sys.executable, "-c", WORKER, marker], stdout=subprocess.PIPE, text=True,
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        zygote_pid, launcher_pid = (int(x) for x in worker.stdout.readline().split())
        family = [psutil.Process(zygote_pid), psutil.Process(launcher_pid)]
        family += family[1].children(recursive=True)
        assert len(family) >= 4  # zygote, launcher, init, the child
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    gone, alive = psutil.wait_procs(family, timeout=30)
    assert not alive, [p.pid for p in alive]

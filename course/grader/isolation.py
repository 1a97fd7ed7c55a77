"""How far a learner's child process is fenced off, probed at run time.

Tiers, strongest first; `auto` takes the first that works on this machine:

1. `bubblewrap`: user, pid, net, ipc and uts namespaces; the whole file system
   read-only; the solutions, the checks, the course's git history, the class
   folder, the output folder and every other submission's copy hidden under
   empty tmpfs mounts; a fresh /tmp; the submission's own throw-away copy the
   only writable place; an unprivileged uid; dies with its parent.
2. `unshare` (root only): the same namespaces and hidden paths through
   util-linux `unshare`, then `setpriv` to an unprivileged uid of its own per
   worker slot, so the system is read-only by permissions rather than mounts.
3. `uid` (root only): no namespaces; only the drop to a per-slot unprivileged
   uid. Other copies are unreadable (mode 0700, another uid) but the solutions
   and the class folder are as readable as their permissions say, and the
   network is open.
4. `process`: a separate process with a scrubbed environment in a throw-away
   copy; nothing stops it from reading what the grader's user can read.

In every tier the engine still enforces the wall-clock and memory limits and
decides pass/fail in the trusted parent; isolation only narrows what graded
code can see and touch. The report names the tier in force and what it hides.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

TIERS = ("bubblewrap", "unshare", "uid", "process")
BASE_UID = 61000  # + worker slot: each worker's children get a uid of their own
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")

GUARANTEES = {
    "bubblewrap": dict(network_off=True, solutions_hidden=True, other_submissions_hidden=True,
                       system_read_only=True, unprivileged=True, own_pid_namespace=True),
    "unshare": dict(network_off=True, solutions_hidden=True, other_submissions_hidden=True,
                    system_read_only=True, unprivileged=True, own_pid_namespace=True),
    "uid": dict(network_off=False, solutions_hidden=False, other_submissions_hidden=True,
                system_read_only=False, unprivileged=True, own_pid_namespace=False),
    "process": dict(network_off=False, solutions_hidden=False, other_submissions_hidden=False,
                    system_read_only=False, unprivileged=False, own_pid_namespace=False),
}


# Sandboxes report a child killed by signal N as exit status 128+N. The engine
# tells an out-of-memory kill or a crash from an exit by the signal, so this
# shim, outside the sandbox, turns the status back into death by that signal.
_SIGNAL_SHIM = [
    "/bin/sh", "-c",
    '"$@"; s=$?; if [ "$s" -gt 128 ] && [ "$s" -lt 160 ]; then kill -$((s - 128)) $$; fi; exit "$s"',
    "jaxlings-sandbox",
]


class IsolationError(Exception):
    """The isolation asked for does not work here; the message says why."""


@dataclass(frozen=True)
class Isolation:
    tier: str
    hidden: tuple[Path, ...]  # paths the child must not see (where the tier can hide)
    work_root: Path  # where throw-away copies live; hidden as a whole from each child
    tried: tuple[str, ...] = ()  # why stronger tiers were passed over
    bwrap: str | None = None

    def uid(self, slot: int) -> int | None:
        if self.tier in ("unshare", "uid"):
            return BASE_UID + slot
        return None

    def prepare_copy(self, copy: Path, slot: int) -> None:
        """Make `copy` writable to the child, and to it alone."""
        uid = self.uid(slot)
        if uid is None:
            return
        for folder, dirs, files in os.walk(copy):
            for name in (*dirs, *files):
                os.lchown(os.path.join(folder, name), uid, uid)
        os.chown(copy, uid, uid)
        os.chmod(copy, 0o700)

    def prefix(self, copy: Path, slot: int) -> list[str]:
        """The argv prefix that runs a child command inside the sandbox, in `copy`."""
        if self.tier == "bubblewrap":
            return [*_SIGNAL_SHIM, *self._bwrap_prefix(copy)]
        if self.tier == "unshare":
            return [*_SIGNAL_SHIM, *self._unshare_prefix(copy, slot)]
        if self.tier == "uid":
            uid = str(self.uid(slot))
            return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--"]
        return []

    def _bwrap_prefix(self, copy: Path) -> list[str]:
        argv = [self.bwrap or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--tmpfs", "/tmp", "--tmpfs", "/dev/shm", "--tmpfs", "/run"]
        for p in (*self.hidden, self.work_root):
            if p.is_dir():
                argv += ["--tmpfs", str(p)]
            elif p.exists():
                argv += ["--ro-bind", "/dev/null", str(p)]
        # The copy sits under the hidden work root: bound back after hiding it.
        argv += ["--bind", str(copy), str(copy), "--chdir", str(copy),
                 "--unshare-all", "--die-with-parent", "--new-session",
                 "--uid", "65534", "--gid", "65534", "--"]
        return argv

    def _unshare_prefix(self, copy: Path, slot: int) -> list[str]:
        uid = str(self.uid(slot))
        hide = [str(p) for p in (*self.hidden, Path("/tmp"), Path("/dev/shm")) if p.is_dir() and not _inside(copy, p)]
        script = (
            'n=$1; shift; i=0; while [ "$i" -lt "$n" ]; do '
            'mount -t tmpfs -o size=1m,mode=0755 jaxlings-hidden "$1" || exit 125; shift; i=$((i+1)); done; '
            # No exec: the shell stays PID 1 of the namespace, because PID 1
            # ignores signals it has no handler for and graded code must die
            # of its signals like any process.
            f'cd "$1" || exit 125; shift; setpriv --reuid={uid} --regid={uid} --clear-groups --no-new-privs -- "$@"; '
            'exit $?'
        )
        return ["unshare", "--mount", "--net", "--ipc", "--uts", "--pid", "--fork", "--kill-child",
                "--mount-proc", "--", "/bin/sh", "-c", script, "sh", str(len(hide)), *hide, str(copy)]

    def child_env(self, copy: Path) -> dict[str, str]:
        """A scrubbed environment: nothing of the grader's leaks into graded code."""
        env = {k: os.environ[k] for k in _KEEP_ENV if k in os.environ}
        env.update(HOME=str(copy), TMPDIR=str(copy), PYTHONDONTWRITEBYTECODE="1", PYTHONNOUSERSITE="1")
        return env

    def describe(self) -> dict:
        return {
            "tier": self.tier,
            "order": list(TIERS),
            "guarantees": GUARANTEES[self.tier],
            "hidden_from_graded_code": [str(p) for p in self.hidden] + ["other submissions' copies"]
            if GUARANTEES[self.tier]["solutions_hidden"] else [],
            "passed_over": list(self.tried),
        }


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
        return True
    except ValueError:
        return False


def choose(requested: str, hidden: Sequence[Path], work_root: Path) -> Isolation:
    """The strongest working tier (`auto`), or exactly `requested` if it works."""
    hidden = tuple(dict.fromkeys(p.resolve() for p in hidden))
    wanted = TIERS if requested == "auto" else (requested,)
    if requested != "auto" and requested not in TIERS:
        raise IsolationError(f"unknown isolation {requested!r}; choose auto or one of {', '.join(TIERS)}")
    tried: list[str] = []
    for tier in wanted:
        why = _unavailable(tier)
        if why is None:
            candidate = Isolation(tier, hidden, work_root.resolve(), tuple(tried), shutil.which("bwrap"))
            why = _probe(candidate)
            if why is None:
                return candidate
        tried.append(f"{tier}: {why}")
    raise IsolationError(f"isolation {requested!r} does not work here: {tried[-1]}")


def _unavailable(tier: str) -> str | None:
    if not sys.platform.startswith("linux") and tier != "process":
        return "needs Linux"
    if tier == "bubblewrap" and shutil.which("bwrap") is None:
        return "bwrap is not installed (apt-get install bubblewrap)"
    if tier in ("unshare", "uid") and os.geteuid() != 0:
        return "needs root"
    if tier == "unshare" and shutil.which("unshare") is None:
        return "util-linux unshare is not installed"
    if tier in ("unshare", "uid") and shutil.which("setpriv") is None:
        return "util-linux setpriv is not installed"
    return None


_PROBE = """
import os, sys
hidden = sys.argv[1:]
leaks = [p for p in hidden if os.path.isdir(p) and os.listdir(p)]
open("probe-write", "w").write("ok")
print("LEAK" if leaks else "OK", *leaks)
"""


def _probe(iso: Isolation) -> str | None:
    """Run a tiny child under `iso` and check it sees what it should, and no more."""
    iso.work_root.mkdir(parents=True, exist_ok=True)
    copy = Path(tempfile.mkdtemp(dir=iso.work_root, prefix="probe-"))
    try:
        iso.prepare_copy(copy, 0)
        must_hide = [str(p) for p in iso.hidden] if GUARANTEES[iso.tier]["solutions_hidden"] else []
        argv = [*iso.prefix(copy, 0), sys.executable, "-I", "-c", _PROBE, *must_hide]
        try:
            proc = subprocess.run(argv, cwd=copy, env=iso.child_env(copy), capture_output=True,
                                  text=True, timeout=30, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"could not start ({exc})"
        out = proc.stdout.strip()
        if proc.returncode != 0 or not out.startswith(("OK", "LEAK")):
            err = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            return f"does not start here ({err[:200]})"
        if out.startswith("LEAK"):
            return f"did not hide {out[5:]}"
        if not (copy / "probe-write").exists():
            return "the child's writes did not land in its copy"
        return None
    finally:
        shutil.rmtree(copy, ignore_errors=True)

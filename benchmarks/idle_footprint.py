"""What a one-off `jaxlings check` leaves running: the check server and its warm children, idle.

In a throw-away workspace (the reference solution as the learner's file, and a
throw-away user cache), runs `python -m course check NAME --json` once, which
starts the workspace's check server; waits until the server and its children
have settled (their memory stops changing) and reads, from /proc, the
resident memory (RSS) and the proportional share (PSS: shared pages split
between the processes that map them) of every process in the server's tree:
the warm footprint. Then waits for the server to cool (`--warm-window`, here
shorter than the server's default `WARM_S`: what is left is the same) and
reads it again: the idle footprint, judged against the target. Finally checks
once more and deletes the workspace: the server and all its children must end.

    .venv/bin/python benchmarks/idle_footprint.py [--exercise functional_ops] [--warm-window 30]

Linux only (it reads /proc). Exits 0 when the footprint meets the target, 1 when not.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

IDLE_TARGET_MB = 400.0
SETTLE_TIMEOUT_S = 120.0  # children import JAX after a check; slow on a busy machine
END_TIMEOUT_S = 60.0


def descendants(root: int) -> list[int]:
    """`root` and every process below it, from the parent ids in /proc (children of children too)."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields start after the last ")".
        fields = stat[stat.rfind(b")") + 2:].split()
        parents.setdefault(int(fields[1]), []).append(int(name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(parents.get(pid, ()))
    return tree


def _kib(path: str, key: bytes) -> int:
    try:
        with open(path, "rb") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in KiB; 0 for one that has ended."""
    return _kib(f"/proc/{pid}/status", b"VmRSS:"), _kib(f"/proc/{pid}/smaps_rollup", b"Pss:")


def describe(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return "?"
    words = [os.path.basename(a.decode(errors="replace")) for a in argv if a][:4]
    return " ".join(words)[:60]


def footprint(root: int) -> list[tuple[int, int, int, str]]:
    return [(pid, *memory(pid), describe(pid)) for pid in descendants(root)]


def settle(root: int, timeout: float = SETTLE_TIMEOUT_S) -> list[tuple[int, int, int, str]]:
    """The tree's footprint once its RSS has stayed within 2% for three readings a second apart."""
    deadline = time.monotonic() + timeout
    readings: list[int] = []
    rows = footprint(root)
    while time.monotonic() < deadline:
        time.sleep(1.0)  # sampling memory: there is nothing to wait on but time
        rows = footprint(root)
        readings.append(sum(r[1] for r in rows))
        last = readings[-3:]
        if len(last) == 3 and max(last) - min(last) <= 0.02 * max(last):
            break
    return rows


def alive(pids: list[int]) -> list[int]:
    left = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2:][:1] != b"Z":
            left.append(pid)
    return left


def make_workspace(where: Path, exercise) -> Path:
    target = where / "exercises" / exercise.file
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(exercise.solution_path(), target)
    return where


def _print_rows(rows) -> None:
    print(f"  {'pid':>8s} {'RSS MB':>8s} {'PSS MB':>8s}  process")
    for p, r, s, what in rows:
        print(f"  {p:8d} {r / 1024:8.1f} {s / 1024:8.1f}  {what}")


def _total(rows) -> tuple[float, float]:
    return sum(r[1] for r in rows) / 1024, sum(r[2] for r in rows) / 1024


def measure(exercise_name: str, course: Path, *, warm_window: float = 30.0, verbose: bool = True) -> dict | None:
    """RSS in MB of the server and its children right after a one-off check ("warm") and once the
    server has cooled ("idle"), and how long they took to end once the workspace was deleted
    ("ended_s", None if they did not). None if no server ran."""
    from course.catalog import load_catalog
    from course.engine import server

    exercise = load_catalog(course).exercise(exercise_name)
    found: dict = {}
    with tempfile.TemporaryDirectory(prefix="jaxlings-idle-") as tmp:
        workspace = make_workspace(Path(tmp) / "ws", exercise)
        env = {**os.environ, "JAXLINGS_COURSE_ROOT": str(course), "JAXLINGS_WORKSPACE": str(workspace),
               "JAXLINGS_SERVER": "1", "JAXLINGS_SERVER_WARM": str(warm_window),
               "XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        env.pop("JAXLINGS_PROGRESS", None)
        proc = subprocess.run([sys.executable, "-m", "course", "check", exercise_name, "--json"],
                              cwd=workspace, env=env, capture_output=True, text=True)
        checked = time.monotonic()
        if proc.returncode not in (0, 1):
            raise SystemExit(f"`jaxlings check {exercise_name}` failed to run:\n{proc.stderr[-3000:]}")
        folder = server.server_dir(workspace / ".jaxlings")
        try:
            pid = int(server._call(folder, {"op": "ping"}, 30)["pid"])
        except (server.Unavailable, OSError, ValueError, KeyError) as e:
            print(f"warning: no check server answered ({e})", file=sys.stderr)
            return None
        rows = settle(pid, timeout=max(1.0, warm_window - (time.monotonic() - checked) - 1))
        found["warm"], pss = _total(rows)
        if verbose:
            _print_rows(rows)
        print(f"after a one-off check of {exercise_name} (warm, for JAXLINGS_SERVER_WARM s: "
              f"{server.WARM_S:.0f} by default): RSS {found['warm']:.0f} MB, PSS {pss:.0f} MB "
              f"over {len(rows)} processes")
        deadline = time.monotonic() + warm_window + SETTLE_TIMEOUT_S
        while time.monotonic() < deadline:
            if not server._call(folder, {"op": "ping"}, 30).get("warm", True):
                break
            time.sleep(0.5)  # a ping does not keep the server warm
        rows = settle(pid)
        found["idle"], pss = _total(rows)
        if verbose:
            _print_rows(rows)
        print(f"idle footprint ({warm_window:.0f} s after the check here): RSS {found['idle']:.0f} MB, "
              f"PSS {pss:.0f} MB over {len(rows)} processes (server and warm children)")
        # Warm it again, then delete the workspace: nothing may outlive it.
        subprocess.run([sys.executable, "-m", "course", "check", exercise_name, "--json"],
                       cwd=workspace, env=env, capture_output=True, text=True)
        tree = descendants(pid)
        shutil.rmtree(workspace)
        t0 = time.monotonic()
        while alive(tree) and time.monotonic() < t0 + END_TIMEOUT_S:
            time.sleep(0.1)
        left = alive(tree)
        found["ended_s"] = None if left else time.monotonic() - t0
        if left:
            print(f"  the workspace is deleted; still running after {END_TIMEOUT_S:.0f} s: {left}")
            for p in left:
                try:
                    os.kill(p, 9)
                except OSError:
                    pass
        else:
            print(f"  the workspace is deleted: the warm server and its {len(tree) - 1} children ended "
                  f"in {found['ended_s']:.1f} s")
    return found


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", default="functional_ops")
    parser.add_argument("--warm-window", type=float, default=30.0,
                        help="JAXLINGS_SERVER_WARM for this server: seconds it stays warm after the check")
    parser.add_argument("--course", type=Path, default=REPO)
    args = parser.parse_args()
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.1f}")
    found = measure(args.exercise, args.course.resolve(), warm_window=args.warm_window)
    if found is None:
        return 1
    ok = found["idle"] <= IDLE_TARGET_MB and found["ended_s"] is not None
    print(f"  target: idle footprint <= {IDLE_TARGET_MB:.0f} MB RSS: {verdict(found['idle'] <= IDLE_TARGET_MB)}")
    print(f"  target: ends with its workspace: {verdict(found['ended_s'] is not None)}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

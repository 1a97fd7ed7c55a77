"""What sandboxes leave on the host while they run: private folders, locked while in use,
and pids cgroups, each swept once the process that owned it has died."""

from __future__ import annotations

import errno
import fcntl
import functools
import os
import secrets
import shutil
import tempfile
from pathlib import Path

CGROUP_PREFIX = "jaxlings-"


class IsolationError(Exception):
    """The isolation asked for does not work here, or may not be used without consent."""


# -- host folders: private, locked while in use, swept when their owner died ------


def _base_dir() -> Path:
    base = Path(tempfile.gettempdir()) / f"jaxlings-sandboxes-{os.getuid()}"
    try:
        base.mkdir(mode=0o711)
    except FileExistsError:
        pass
    st = os.lstat(base)
    if not os.path.isdir(base) or os.path.islink(base) or st.st_uid != os.getuid():
        raise IsolationError(f"{base} is not a folder of this user; remove it")
    # Traversable, not listable: the `uid` tier's children reach their own copy by name.
    os.chmod(base, 0o711)
    return base


class HostFolder:
    """A private folder on the host that lives as long as its owner process holds its lock.

    A run killed with SIGKILL cannot clean up; the next run sweeps every folder
    whose lock nobody holds any more.
    """

    def __init__(self, kind: str) -> None:
        for attempt in range(8):
            base = _base_dir()
            try:
                sweep(base)
                self.path = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=base))
                break
            except FileNotFoundError:  # the last folder in it went, and `base` with it: made again
                if attempt == 7:
                    raise
        # Locked before it takes its name: a sweep never sees an unlocked `.lock` of a live folder.
        pending = self.path / f".lock-{secrets.token_hex(4)}"
        self._lock = os.open(pending, os.O_CREAT | os.O_EXCL | os.O_RDWR | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(pending, self.path / ".lock")

    def remove(self) -> None:
        if self._lock is None:
            return
        remove_tree(self.path)
        os.close(self._lock)
        self._lock = None
        try:  # the last one out takes the sandboxes' folder with it; one still in use keeps it
            os.rmdir(self.path.parent)
        except OSError:
            pass


def sweep(base: Path | None = None) -> list[str]:
    """Remove folders left by runs that died without cleaning up; returns their names."""
    base = base or _base_dir()
    removed = []
    for entry in list(base.iterdir()):
        lock = entry / ".lock"
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = None  # being created right now, or half removed: judge it by its age
        except OSError:
            continue
        try:
            if fd is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as exc:
                    if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                        continue  # alive
                    raise
            elif _age(entry) < 60:
                continue
            remove_tree(entry)
            removed.append(entry.name)
        finally:
            if fd is not None:
                os.close(fd)
    if pids_cgroup_base.cache_info().currsize:  # only where this process makes pids cgroups
        sweep_cgroups(base, pids_cgroup_base()[0])
    return removed


def _age(path: Path) -> float:
    import time

    try:
        return time.time() - path.lstat().st_mtime
    except OSError:
        return 0.0


def remove_tree(path: Path) -> None:
    """Remove a folder even where graded code made parts of it read-only."""

    def unlock(func, p, _exc):
        try:
            os.chmod(os.path.dirname(p), 0o700)
            if not os.path.islink(p):
                os.chmod(p, 0o700)
            func(p)
        except OSError:
            pass

    shutil.rmtree(path, onerror=unlock)


# -- pids cgroups: every task of a child's tree counted, however it was started ----


def _pids_hierarchy() -> tuple[Path | None, str]:
    """This process's cgroup in a pids hierarchy it may make groups under, or (None, why not).

    Only cgroup v1's pids controller is used (root may write there). A cgroup v2 tree
    delegated to the user would need the grader moved out of its own leaf group before
    `pids` could be enabled for groups below it: not done.
    """
    try:
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split() for line in f]
        with open("/proc/self/cgroup") as f:
            groups = [line.rstrip("\n").split(":", 2) for line in f]
    except OSError as exc:
        return None, f"cannot read this process's cgroups ({exc.strerror or exc})"
    own = next((path for _, controllers, path in groups if "pids" in controllers.split(",")), None)
    for fields in mounts:
        sep = fields.index("-") if "-" in fields else -1
        if sep < 0 or fields[sep + 1] != "cgroup" or "pids" not in fields[sep + 3].split(","):
            continue
        if own is None:
            break
        base = Path(fields[4]) / own.lstrip("/")
        if base.is_dir() and os.access(base, os.W_OK):
            return base, ""
        return None, f"the pids cgroup {base} is not writable by this user"
    return None, "no cgroup v1 pids controller is mounted here (cgroup v2 delegation is not used)"


@functools.lru_cache(maxsize=1)
def pids_cgroup_base() -> tuple[str | None, str]:
    """(the folder to make pids cgroups in, "") where one works here, else (None, why not)."""
    base, why = _pids_hierarchy()
    if base is None:
        return None, why
    try:
        test = PidsCgroup(base, f"probe-{os.getpid()}-{secrets.token_hex(4)}", 1)
    except OSError as exc:
        return None, f"cannot make a pids cgroup in {base} ({exc.strerror or exc})"
    test.remove()
    return str(base), ""


def cgroup_name(folder: Path) -> str:
    """The pids cgroup's name for a sandbox folder. Groups share one hierarchy for the whole
    machine while folders live under each run's temporary folder (TMPDIR), so the name
    carries a tag of that parent: a sweep judges only the groups of its own folders."""
    folder = Path(folder)
    return f"{_folders_tag(folder.parent)}-{folder.name}"


def _folders_tag(folders: Path) -> str:
    import hashlib

    return hashlib.sha256(os.fsencode(os.path.abspath(folders))).hexdigest()[:10]


class PidsCgroup:
    """One pids cgroup (cgroup v1) with its pids.max; the sandbox's launcher moves itself in
    before it starts anything, so every task of the child's tree is counted."""

    def __init__(self, base: Path, name: str, limit: int) -> None:
        self.path = Path(base) / f"{CGROUP_PREFIX}{os.getuid()}-{name}"
        self.path.mkdir(mode=0o755)
        try:
            _write_text(self.path / "pids.max", str(limit))
        except OSError:
            self.path.rmdir()
            raise

    @property
    def procs(self) -> str:
        return str(self.path / "cgroup.procs")

    def remove(self) -> bool:
        """Kill what is left in the group and remove it; False if it is still busy (a later
        sweep removes it)."""
        import time

        for attempt in range(200):
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    return False
            try:
                with open(self.procs) as f:
                    pids = [int(line) for line in f if line.strip()]
            except (OSError, ValueError):
                pids = []
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            time.sleep(0.01 if attempt < 50 else 0.05)  # the kernel reaps the killed tasks
        return False


def _write_text(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def sweep_cgroups(folders: Path, cgroups: Path | str | None) -> None:
    """Remove this user's pids cgroups whose sandbox folder under `folders` is gone (their
    run died). Groups of folders elsewhere (another TMPDIR) are not this sweep's to judge."""
    if cgroups is None:
        return
    mine = f"{CGROUP_PREFIX}{os.getuid()}-{_folders_tag(folders)}-"
    try:
        entries = [e for e in os.listdir(cgroups) if e.startswith(mine)]
    except OSError:
        return
    for entry in entries:
        name = entry[len(mine):]
        if not (folders / name).exists():
            try:
                os.rmdir(os.path.join(cgroups, entry))
            except OSError:
                pass

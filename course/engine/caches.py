"""Compiled programs kept between processes: where they live, who may write them, how much stays.

Each workspace has two compilation caches:

- the trusted one, `.jaxlings/xla-cache/` in the workspace, for this process
  and the reference's own children (used only where learner children cannot
  write it);
- the learner's, `learner-xla-<digest>/` in the user's cache folder
  (`platformdirs.user_cache_dir("jaxlings")`), outside the workspace, whose
  path the learner's environment must not name. A sandbox binds it in,
  writable.

Both are bounded when a session starts (`trim`): the oldest entries go first,
in subfolders too, until the folder holds at most `CACHE_MAX_BYTES`. And a
learner cache whose workspace no longer exists is removed (`sweep_orphans`):
next to every such folder lies `learner-xla-<digest>.workspace`, a file written
here (never inside the folder a learner child can write) that names the
workspace's state folder. Nothing in the cache folder that does not carry our
name is ever touched.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from course import paths

# JAX's own size limit re-reads every entry's access time on every write
# (seconds per check with a few hundred small entries), so its cache runs
# unbounded and a session trims it to this size when it starts.
CACHE_MAX_BYTES = 512 * 1024 * 1024
LEARNER_PREFIX = "learner-xla-"
MARKER_SUFFIX = ".workspace"
_LEARNER_NAME = re.compile(r"learner-xla-[0-9a-f]{16}")
# A learner cache from before the marker was written: removed once nobody has written it for this long.
UNMARKED_MAX_AGE_S = 7 * 24 * 3600
_MARKER_MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class CompileCache:
    """Folders where JAX keeps compiled programs between processes.

    JAX treats its compilation cache as trusted: whoever can write an entry
    decides what native code a later process runs. So the trusted side (this
    process and the reference's own children) and the learner's children never
    share one, and a session uses the trusted one only where learner children
    cannot write it (`usable_cache`). The learner's folder is read and written
    only by learner processes; it lies outside the workspace, whose path the
    learner's environment must not name.
    """

    trusted: Path | None
    learner: Path | None

    def learner_env(self) -> dict[str, str]:
        return cache_env(self.learner) if self.learner is not None else {}

    def trusted_env(self) -> dict[str, str]:
        return cache_env(self.trusted) if self.trusted is not None else {}


def cache_env(folder: Path) -> dict[str, str]:
    # Every program, however small or quick to compile: the checks' programs are small.
    return {
        "JAX_COMPILATION_CACHE_DIR": str(folder),
        "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
        "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1",
        "JAX_COMPILATION_CACHE_MAX_SIZE": "-1",
    }


def user_cache_root() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("jaxlings"))


def _digest(state: Path) -> str:
    return hashlib.sha256(str(state).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def workspace_compile_cache(state_dir: Path | None = None) -> CompileCache:
    """The caches of one learner's workspace (`.jaxlings/` by default).

    Only for a learner's own checks: the grader, where submissions must not
    reach one another, uses none.
    """
    state = Path(state_dir) if state_dir is not None else paths.state_dir()
    state = state.resolve()
    learner = user_cache_root() / f"{LEARNER_PREFIX}{_digest(state)}"
    return CompileCache(trusted=state / "xla-cache", learner=learner)


# -- bounds -------------------------------------------------------------------------


def trim(folder: Path, max_bytes: int = CACHE_MAX_BYTES) -> None:
    """Delete the least recently written entries, in subfolders too, until `folder` holds at most
    `max_bytes`; then the subfolders left empty. Symbolic links are removed, never followed."""
    if os.path.islink(folder):
        return  # not a folder of ours
    entries = []
    folders = []
    for dirpath, dirnames, filenames in os.walk(folder, onerror=lambda _e: None):
        folders.extend(os.path.join(dirpath, d) for d in dirnames)
        for name in (*filenames, *dirnames):
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISDIR(st.st_mode):  # os.walk lists a link to a folder among the folders
                entries.append((st.st_mtime, st.st_size, path))
    total = sum(size for _mtime, size, _path in entries)
    for _mtime, size, path in sorted(entries):
        if total <= max_bytes:
            break
        try:
            os.unlink(path)
            total -= size
        except OSError:
            pass
    for path in sorted(folders, key=len, reverse=True):  # the deepest first
        try:
            os.rmdir(path)  # only when empty
        except OSError:
            pass


# -- caches whose workspace is gone -------------------------------------------------


def _marker(cache: Path) -> Path:
    return cache.with_name(cache.name + MARKER_SUFFIX)


def record_workspace(cache: Path, state: Path) -> None:
    """Write, next to the learner cache `cache`, which state folder it belongs to."""
    marker = _marker(cache)
    text = os.fsencode(str(state))
    try:
        if marker.read_bytes() == text:
            return
    except OSError:
        pass
    tmp = marker.with_name(f"{marker.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(text)
        os.replace(tmp, marker)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _recorded_state(marker: Path) -> Path | None:
    try:
        fd = os.open(marker, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        data = f.read(_MARKER_MAX_BYTES + 1)
    if not data or len(data) > _MARKER_MAX_BYTES or b"\0" in data:
        return None
    return Path(os.fsdecode(data))


def _orphaned(cache: Path, now: float) -> bool:
    state = _recorded_state(_marker(cache))
    if state is None:
        if os.path.lexists(_marker(cache)):
            return False  # a marker we cannot read: not ours to judge
        try:
            return now - os.lstat(cache).st_mtime > UNMARKED_MAX_AGE_S
        except OSError:
            return False
    if _digest(state) != cache.name[len(LEARNER_PREFIX):]:
        return False  # the marker names another folder's workspace: leave both alone
    # The workspace, not only its state folder: a check may run before .jaxlings/ exists.
    return not os.path.lexists(state) and not os.path.lexists(state.parent)


def sweep_orphans(root: Path | None = None, *, now: float | None = None, keep: str = "") -> list[str]:
    """Remove the learner caches (and their markers) whose workspace no longer exists.

    Only folders named `learner-xla-<16 hex digits>` directly in `root` (the
    user's jaxlings cache folder) are considered, and never `keep` (the one
    about to be used). Returns the names removed."""
    root = user_cache_root() if root is None else root
    now = time.time() if now is None else now
    removed = []
    try:
        with os.scandir(root) as it:
            names = [e.name for e in it
                     if e.name != keep and _LEARNER_NAME.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return removed
    for name in names:
        cache = root / name
        if not _orphaned(cache, now):
            continue
        shutil.rmtree(cache, ignore_errors=True)  # never follows a link out of the folder
        try:
            os.unlink(_marker(cache))
        except OSError:
            pass
        removed.append(name)
    return removed


# -- what a session may use ---------------------------------------------------------


def private_folder(folder: Path, owner: int | None = None) -> bool:
    """Create `folder` readable only by this user; False when that is impossible.

    `owner` is a uid accepted besides this user's: the one a sandbox hands the
    learner's cache to (`Isolation.learner_cache_owner`), so that the next
    session finds the folder an earlier one handed over."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.stat()
        if st.st_uid not in (os.getuid(), owner):
            return False  # someone else's folder: its entries cannot be trusted
        if st.st_mode & 0o077:
            os.chmod(folder, 0o700)
        return True
    except OSError:
        return False


def usable_cache(cache: CompileCache | None, isolated: bool, learner_owner: int | None = None) -> CompileCache | None:
    """The caches this session may use, trimmed to their bound.

    The trusted cache only where learner children cannot write it (a sandbox
    without the workspace): an entry is native code the trusted side would
    run. The learner's cache always: a sandbox binds it in, writable, at a
    path that names nothing of ours. Each folder must be private to this user;
    the learner's may instead belong to `learner_owner`, the uid this session's
    sandbox hands it to (run as root), as an earlier session left it.
    A workspace's learner cache gets its marker here, and the caches of
    workspaces that are gone are removed.
    """
    if cache is None:
        return None
    trusted = cache.trusted if isolated and private_folder(cache.trusted) else None
    learner = (cache.learner if cache.learner is not None and private_folder(cache.learner, learner_owner)
               else None)
    if trusted is None and learner is None:
        return None
    if learner is not None and cache.trusted is not None and _LEARNER_NAME.fullmatch(learner.name):
        state = cache.trusted.parent
        if learner.name == LEARNER_PREFIX + _digest(state):
            record_workspace(learner, state)
        sweep_orphans(learner.parent, keep=learner.name)
    for folder in (trusted, learner):
        if folder is not None:
            trim(folder)
    return CompileCache(trusted, learner)


def use_trusted_cache(folder: Path) -> None:
    """Point this process's JAX at the trusted cache, unless the user chose one."""
    import jax

    from course.engine import compile_flags

    current = jax.config.jax_compilation_cache_dir
    if current is not None:
        return  # already set: by an earlier session, or by the user (JAX_COMPILATION_CACHE_DIR)
    if compile_flags.adopted():
        # JAX keys an entry on XLA_FLAGS as the environment holds it when it compiles, and this
        # process compiles with the check's options without holding them there: its entries are
        # kept apart from those of a process that compiled with XLA's defaults.
        folder = folder / compile_flags.TRUSTED_SUBFOLDER
        folder.mkdir(mode=0o700, exist_ok=True)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    jax.config.update("jax_compilation_cache_max_size", -1)
    jax.config.update("jax_compilation_cache_dir", str(folder))

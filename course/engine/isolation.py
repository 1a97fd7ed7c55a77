"""What the learner's process may see and do: one sandbox for `check`, the app and `grade`.

The sandbox is built by *allowing*, not by hiding a list of secrets. A child
sees, read-only: the Python installation (interpreter, standard library,
site-packages), the system libraries (/usr, /lib), and of the course only
`course/__init__.py` and `course/engine/` (mounted at /jaxlings/course), plus
the one learner file the parent stages for it (/learner/<name>.py). It gets a
private writable home (its working folder) and a private /tmp, both small
tmpfs mounts that vanish with it, a minimal /dev and the /proc of its own pid
namespace. There is no network. The solutions, the checks, the course data,
the tests, the workspace's .jaxlings/ state, other submissions and the host's
home are not hidden: they are simply not there.

Tiers, strongest first (`auto` takes the first that works here):

- `bubblewrap`: the allow-list above through `bwrap` (when installed).
- `unshare`: the same allow-list through our own launcher
  (`course/engine/launcher.py`), from unprivileged user namespaces: no root
  and no setuid helper needed.
- `uid` (grading as root only): no namespaces; the child runs as an
  unprivileged uid of its own per worker slot. It hides nothing else.
- `process`: a plain child with a scrubbed environment.

In the first two, the learner runs as a non-root uid without capabilities,
mapped to an unprivileged host uid (the grader's own, or SANDBOX_HOST_UID when
the grader is root), may not create user namespaces, sees the host's device
nodes only through read-only binds, every process it starts dies with the check
(its pid namespace ends when the check's process ends), its processes and
threads are limited (MAX_TASKS), and nothing in its environment names the
course or the workspace. Where this process may make pids cgroups (cgroup v1's
pids controller, writable: as root), each child's whole process tree also runs
in a group of its own limited to PIDS_MAX tasks; `describe()` says whether it
does, and why not. Each tier's `guarantees` say exactly what it holds, and nothing more.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# Re-exported: the grader, the session and the tests read these names here.
from course.engine.allowed import (  # noqa: F401
    ENGINE_DIR, HOME_MB, INSIDE_CACHE, INSIDE_HOME, INSIDE_INBOX, INSIDE_ROOT, LAUNCHER, PACKAGE_DIR, SHM_MB, TMP_MB,
    _devices, child_env, masked_paths, python_paths, read_only_binds)
from course.engine.host import (  # noqa: F401
    CGROUP_PREFIX, HostFolder, IsolationError, PidsCgroup, cgroup_name, pids_cgroup_base, remove_tree, sweep,
    sweep_cgroups)
from course.engine.words import N_, _

TIERS = ("bubblewrap", "unshare", "uid", "process")
SANDBOX_TIERS = ("bubblewrap", "unshare")
BASE_UID = 61000  # + worker slot, in the `uid` tier
# The host uid a learner runs as in a sandbox started by root (uid 1000 inside). Never 0:
# host root owns /dev's nodes and more. Tasks are counted per user namespace, so learners
# sharing this uid each get their own RLIMIT_NPROC.
SANDBOX_HOST_UID = 61999
# RLIMIT_NPROC in the learner's process: its processes and threads together. JAX's and
# XLA's thread pools take a few per core; a learner starting threads in a loop stops here.
MAX_TASKS = max(512, 8 * (os.cpu_count() or 1))
# Where a pids cgroup can be made here, each sandboxed child's whole process tree runs in one
# of its own with this pids.max: the learner's tasks plus the launcher, its helper and init.
# Unlike RLIMIT_NPROC it counts every task of the tree, whatever its uid, and no process in
# it can raise it or leave the group (the cgroup file system is not in the sandbox).
PIDS_MAX = MAX_TASKS + 16
INSTALL_HINT = N_("install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; "
                  "Fedora: sudo dnf install bubblewrap)")

# What reaches the child of the parent's environment: locale, time zone and the
# settings that choose devices and quiet XLA. Anything naming the workspace or
# the course root is dropped even from these.
GUARANTEES = {
    # Keys kept from earlier reports: solutions_hidden, other_submissions_hidden,
    # system_read_only, unprivileged, own_pid_namespace, network_off.
    "bubblewrap": dict(network_off=True, solutions_hidden=True, other_submissions_hidden=True,
                       host_devices_unchangeable=True, no_nested_user_namespaces=True, tasks_limited=True,
                       system_read_only=True, unprivileged=True, own_pid_namespace=True, private_tmp=True,
                       processes_end_with_check=True, progress_unreachable=True),
    "unshare": dict(network_off=True, solutions_hidden=True, other_submissions_hidden=True,
                    host_devices_unchangeable=True, no_nested_user_namespaces=True, tasks_limited=True,
                    system_read_only=True, unprivileged=True, own_pid_namespace=True, private_tmp=True,
                    processes_end_with_check=True, progress_unreachable=True),
    "uid": dict(network_off=False, solutions_hidden=False, other_submissions_hidden=False,
                host_devices_unchangeable=False, no_nested_user_namespaces=False, tasks_limited=True,
                system_read_only=False, unprivileged=True, own_pid_namespace=False, private_tmp=False,
                processes_end_with_check=False, progress_unreachable=False),
    "process": dict(network_off=False, solutions_hidden=False, other_submissions_hidden=False,
                    host_devices_unchangeable=False, no_nested_user_namespaces=False, tasks_limited=False,
                    system_read_only=False, unprivileged=False, own_pid_namespace=False, private_tmp=False,
                    processes_end_with_check=False, progress_unreachable=False),
}

# In English in reports; `notice()` shows them in the language in use.
SUMMARY = {
    "bubblewrap": N_("sandboxed with bubblewrap: only Python and your file are visible, no network, "
                     "private /tmp, every process ends with the check"),
    "unshare": N_("sandboxed with user namespaces: only Python and your file are visible, no network, "
                  "private /tmp, every process ends with the check"),
    "uid": N_("NOT sandboxed: graded code runs as another user id only; the course, the class folder, "
              "/tmp and the network stay reachable and detached processes can outlive a check"),
    "process": N_("NOT sandboxed: your code runs as a plain process that can read and write what you can"),
}


# -- one child's sandbox -----------------------------------------------------------


class Sandbox:
    """How one child is started: its command line, environment and working folder,
    and where the learner's file is staged for it."""

    def __init__(self, policy: "Isolation", *, slot: int = 0, copy: Path | None = None,
                 cache: Path | None = None) -> None:
        self.folder = HostFolder(f"{policy.tier}-child")
        self.cgroup: PidsCgroup | None = None
        try:
            if policy.pids_cgroup is not None and policy.tier in SANDBOX_TIERS:
                # Made after the folder it is named after, removed before it: a sweep
                # never takes the group of a live sandbox.
                self.cgroup = PidsCgroup(Path(policy.pids_cgroup), cgroup_name(self.folder.path), PIDS_MAX)
            self._set_up(policy, slot, copy, cache)
        except BaseException:
            if self.cgroup is not None:
                self.cgroup.remove()
            self.folder.remove()  # e.g. root that cannot chown to the slot's uid (a namespace mapping root alone)
            raise

    def _set_up(self, policy: "Isolation", slot: int, copy: Path | None, cache: Path | None) -> None:
        self.policy = policy
        self.tier = policy.tier
        self.slot = slot
        self.copy = copy
        # The learner's compilation cache: written by learner processes only, never read by the
        # trusted side; bound writable at INSIDE_CACHE, so nothing inside names where it lives.
        self.cache = cache
        owner = policy.learner_cache_owner
        if cache is not None and owner is not None:
            try:
                os.chown(cache, owner, owner)  # bound writable for the learner's host uid
            except OSError:
                pass  # the learner's programs are then compiled afresh, not kept
        self.inbox = self.folder.path / "inbox"
        self.inbox.mkdir(mode=0o755)
        os.chmod(self.folder.path, 0o755 if self.tier == "uid" else 0o700)
        if self.tier in SANDBOX_TIERS:
            self.home, self.tmp = INSIDE_HOME, "/tmp"
            self.child_script = f"{INSIDE_ROOT}/course/engine/child.py"
            self.cwd = str(self.folder.path)  # the launcher's own cwd on the host; empty, never on sys.path
        else:
            work = copy if copy is not None else self.folder.path / "home"
            work.mkdir(exist_ok=True)
            (work / ".tmp").mkdir(exist_ok=True)
            if self.tier == "uid":
                self.policy.prepare_copy(work, slot)
            self.home, self.tmp = str(work), str(work / ".tmp")
            self.child_script = str(ENGINE_DIR / "child.py")
            self.cwd = str(work)

    @property
    def limits_tasks(self) -> bool:
        """Whether the child may cap its tasks: only where they are counted for the learner
        alone (its own user namespace, or its own uid), not all of the grader's processes."""
        return self.tier in (*SANDBOX_TIERS, "uid")

    def env(self, extra: dict[str, str] | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
        extra = dict(extra or {})
        if self.cache is not None:
            from course.engine.caches import cache_env

            extra = {**cache_env(Path(INSIDE_CACHE) if self.tier in SANDBOX_TIERS else self.cache), **extra}
        return child_env(home=self.home, tmp=self.tmp, extra=extra, base=base)

    def command(self, argv: list[str]) -> list[str]:
        """`argv` (the child's own command line, as seen inside) wrapped in the sandbox."""
        launcher = [sys.executable, "-I", "-S", str(LAUNCHER)]
        if self.tier == "unshare":
            import json

            cfg = dict(root=str(self._root()), ro=read_only_binds(self.inbox), masks=masked_paths(),
                       rw=[(str(self.cache), INSIDE_CACHE)] if self.cache is not None else [],
                       home=INSIDE_HOME, tmp_mb=TMP_MB, home_mb=HOME_MB, shm_mb=SHM_MB, devices=_devices(),
                       uid=SANDBOX_HOST_UID, cgroup=self.cgroup.procs if self.cgroup is not None else None)
            return [*launcher, json.dumps(cfg), "--", *argv]
        if self.tier == "bubblewrap":
            import json

            cfg = dict(mode="bwrap", cgroup=self.cgroup.procs if self.cgroup is not None else None)
            return [*launcher, json.dumps(cfg), "--", *self._bwrap(), "--", *argv]
        if self.tier == "uid":
            uid = str(self.policy.uid(self.slot))
            return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--", *argv]
        return list(argv)

    def _root(self) -> Path:
        root = self.folder.path / "root"
        root.mkdir(exist_ok=True)
        return root

    def _bwrap(self) -> list[str]:
        argv = [self.policy.bwrap or "bwrap", "--unshare-user", "--unshare-all", "--disable-userns",
                "--uid", "1000", "--gid", "1000", "--hostname", "jaxlings", "--cap-drop", "ALL",
                "--die-with-parent", "--dev", "/dev", "--proc", "/proc",
                "--perms", "0700", "--size", str(TMP_MB << 20), "--tmpfs", "/tmp",
                "--perms", "0700", "--size", str(HOME_MB << 20), "--tmpfs", INSIDE_HOME,
                "--size", str(SHM_MB << 20), "--tmpfs", "/dev/shm"]
        for source, inside in read_only_binds(self.inbox):
            if os.path.islink(source):
                argv += ["--symlink", os.readlink(source), inside]
            else:
                argv += ["--ro-bind", source, inside]
        for masked in masked_paths():
            argv += ["--perms", "0555", "--tmpfs", masked]
        for node in _devices():
            argv += ["--dev-bind", f"/dev/{node}", f"/dev/{node}"]
        if self.cache is not None:
            argv += ["--bind", str(self.cache), INSIDE_CACHE]
        argv += ["--remount-ro", "/", "--chdir", INSIDE_HOME]
        return argv

    def stage(self, learner_file: Path) -> str:
        """Put the learner's file where the child can read it; the path to send it.

        In a sandbox the child sees a read-only copy, never the workspace; in the
        weaker tiers it reads the file where it is (the grader's copy, or the
        learner's own file).
        """
        if self.tier not in SANDBOX_TIERS:
            return str(learner_file)
        name = "".join(c if c.isalnum() or c in "_-." else "_" for c in learner_file.name) or "learner.py"
        target = self.inbox / name
        tmp = self.inbox / f".{name}.{secrets.token_hex(4)}"
        shutil.copyfile(learner_file, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
        return f"{INSIDE_INBOX}/{name}"

    def close(self) -> None:
        if self.cgroup is not None:
            self.cgroup.remove()
            self.cgroup = None
        self.folder.remove()


# -- the policy: which tier, and what it promises ----------------------------------


@dataclass(frozen=True)
class Isolation:
    tier: str
    hidden: tuple[Path, ...] = ()  # the grader's own list, kept for its report; the allow-list needs none
    work_root: Path | None = None
    tried: tuple[str, ...] = ()  # why stronger tiers were passed over
    bwrap: str | None = None
    pids_cgroup: str | None = None  # where each child's pids cgroup is made (sandbox tiers), if anywhere
    pids_cgroup_missing: str = ""  # why not, for the report

    @property
    def sandboxed(self) -> bool:
        return self.tier in SANDBOX_TIERS

    def uid(self, slot: int) -> int | None:
        return BASE_UID + slot if self.tier == "uid" else None

    @property
    def learner_cache_owner(self) -> int | None:
        """The uid a sandbox hands the learner's compilation cache to (run as root, the sandbox's
        learner runs as SANDBOX_HOST_UID on the host); None where the folder stays this user's."""
        return SANDBOX_HOST_UID if self.sandboxed and os.geteuid() == 0 else None

    def sandbox(self, *, slot: int = 0, copy: Path | None = None, cache: Path | None = None) -> Sandbox:
        return Sandbox(self, slot=slot, copy=copy, cache=cache)

    def prepare_copy(self, copy: Path, slot: int) -> None:
        """`uid` tier: make `copy` writable to the slot's uid, and to it alone."""
        uid = self.uid(slot)
        if uid is None:
            return
        for folder, dirs, files in os.walk(copy):
            for name in (*dirs, *files):
                os.lchown(os.path.join(folder, name), uid, uid)
        os.chown(copy, uid, uid)
        os.chmod(copy, 0o700)

    def notice(self) -> str:
        """One line for the learner or the instructor: what is in force, and why not more."""
        line = _("Isolation: {tier} ({summary})").format(tier=self.tier, summary=_(SUMMARY[self.tier]))
        if not self.sandboxed:
            why = "; ".join(reason_text(t) for t in self.tried) or _("not requested")
            line += _(". Stronger isolation unavailable: {why}. `jaxlings doctor` says how to fix it.").format(why=why)
        return line

    def describe(self) -> dict:
        return {
            "tier": self.tier,
            "order": list(TIERS),
            "guarantees": GUARANTEES[self.tier],
            "summary": SUMMARY[self.tier],
            "visible_to_graded_code": _visible_summary() if self.sandboxed else "everything this user can read",
            "passed_over": list(self.tried),
            # Each learner's process tree in a pids cgroup of its own (besides RLIMIT_NPROC), or why not.
            "pids_cgroup": (dict(limit=PIDS_MAX) if self.pids_cgroup is not None else
                            dict(limit=None, why_not=self.pids_cgroup_missing or "not a sandbox tier")),
        }


def _visible_summary() -> list[str]:
    return ["the Python installation (read-only)", "course/__init__.py and course/engine/ (read-only)",
            "the exercise file being checked (a read-only copy)", "a private home and /tmp"]


# Why a tier was passed over. `tried` and the grader's report.json keep the English
# (machine-readable); `reason_text` says it in the language in use where it is shown.
REASONS = (
    N_("needs Linux"),
    N_("bwrap is not installed ({hint})"),
    N_("run as root, bwrap would map graded code to host root (the unshare tier does not)"),
    N_("needs root"),
    N_("util-linux setpriv is not installed"),
    N_("cannot prepare its folders ({error})"),
    N_("could not start ({error})"),
    N_("does not start here ({error})"),
    N_("the sandbox does not hold: {leaks}"),
)


def _reason_pattern(template: str) -> re.Pattern[str]:
    pieces = re.split(r"\{(\w+)\}", template)  # literal, name, literal, name, ..., literal
    return re.compile("".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.*)" for i, p in enumerate(pieces)),
                      re.DOTALL)


_REASON_PATTERNS = [(template, _reason_pattern(template)) for template in REASONS]


def reason_text(reason: str) -> str:
    """A reason of REASONS, or `tier: reason` as `tried` holds them, in the language in use.

    The values in it (an OS error, what leaked) stay as they are; text that is not one of
    REASONS is returned unchanged."""
    tier, sep, why = reason.partition(": ")
    if sep and tier in TIERS:
        return f"{tier}: {reason_text(why)}"
    for template, pattern in _REASON_PATTERNS:
        match = pattern.fullmatch(reason)
        if match:
            values = {k: _(v) if v == INSTALL_HINT else v for k, v in match.groupdict().items()}
            return _(template).format(**values)
    return reason


def _unavailable(tier: str) -> str | None:
    if not sys.platform.startswith("linux") and tier != "process":
        return REASONS[0]
    if tier == "bubblewrap" and shutil.which("bwrap") is None:
        return REASONS[1].format(hint=INSTALL_HINT)
    if tier == "bubblewrap" and os.geteuid() == 0:
        # bwrap run by root maps the learner to host root, the owner of the host's
        # device nodes; the unshare tier maps it to SANDBOX_HOST_UID instead.
        return REASONS[2]
    if tier == "uid":
        if os.geteuid() != 0:
            return REASONS[3]
        if shutil.which("setpriv") is None:
            return REASONS[4]
    return None


_PROBE = """
import ctypes, os, socket, sys
seen = sorted(os.listdir("/"))
bad = [p for p in sys.argv[1:] if os.path.exists(p)]
try:
    socket.create_connection(("127.0.0.1", 9), timeout=1)
    bad.append("network")
except OSError:
    pass
open(os.path.join(os.environ["HOME"], "probe"), "w").write("ok")
if os.getuid() == 0:
    bad.append("root inside")
if os.stat("/usr").st_uid == os.getuid():  # the learner is mapped onto host root
    bad.append("host root outside")
with open("/dev/null", "w") as null:  # device nodes still work
    null.write("ok")
try:  # to the mode it has: no harm done where it succeeds
    os.chmod("/dev/null", os.stat("/dev/null").st_mode & 0o7777)
    bad.append("/dev/null changeable")
except OSError:
    pass
if ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0:
    bad.append("nested user namespaces")
print("LEAK" if bad else "OK", *bad)
"""
_PROBE_CGROUP = """
groups = [g.split(":", 2) for g in open("/proc/self/cgroup").read().splitlines()]
if not any("pids" in c.split(",") and p.rstrip("/").endswith("/{name}") for _, c, p in groups):
    print("LEAK not in its pids cgroup")
"""


def probe(iso: Isolation) -> str | None:
    """Run a tiny child under `iso`: None if it starts and sees what it should, else why not."""
    try:
        box = iso.sandbox()
    except OSError as exc:
        return REASONS[5].format(error=exc.strerror or exc)
    try:
        secrets_ = [str(PACKAGE_DIR / "checks"), str(PACKAGE_DIR.parent / "solutions"), str(box.folder.path),
                    str(PACKAGE_DIR / "progress.py")]
        if iso.sandboxed:
            probe_src = _PROBE
            if box.cgroup is not None:  # the probe's own tasks must be counted in the child's group
                probe_src += _PROBE_CGROUP.format(name=box.cgroup.path.name)
            argv = box.command([sys.executable, "-I", "-S", "-c", probe_src, *secrets_])
        else:  # nothing to verify but that a child starts: these tiers promise no more
            argv = box.command([sys.executable, "-I", "-S", "-c", "print('OK')"])
        try:
            proc = subprocess.run(argv, cwd=box.cwd, env=box.env(), capture_output=True, text=True, timeout=60,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return REASONS[6].format(error=exc)
        out = proc.stdout.strip()
        if proc.returncode != 0 or not out.startswith(("OK", "LEAK")):
            lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
            err = lines[-1] if lines else f"exit status {proc.returncode}"
            return REASONS[7].format(error=err[:200])
        leaks = [line[5:] for line in out.splitlines() if line.startswith("LEAK")]
        if leaks:
            return REASONS[8].format(leaks="; ".join(leaks))
        return None
    finally:
        box.close()


def choose(requested: str = "auto", hidden=(), work_root: Path | None = None, *,
           allow_weak: bool = True, grading: bool = False) -> Isolation:
    """The strongest working tier (`auto`), or exactly `requested` if it works.

    With `allow_weak=False` (the grader without --i-understand) a tier without
    namespaces (`uid`, `process`) is never used: `auto` stops after the
    sandboxes and an explicit weak tier is refused, with what it would not hold.
    """
    if requested != "auto" and requested not in TIERS:
        raise IsolationError(f"unknown isolation {requested!r}; choose auto or one of {', '.join(TIERS)}")
    weak_hint = ("grade with weaker isolation on purpose: --isolation uid (as root) or --isolation process, "
                 "with --i-understand")
    if requested not in ("auto", *SANDBOX_TIERS) and not allow_weak:
        raise IsolationError(f"--isolation {requested} is not a sandbox ({SUMMARY[requested]}); "
                             f"add --i-understand to grade with it anyway")
    hidden = tuple(dict.fromkeys(Path(p).resolve() for p in hidden))
    work_root = Path(work_root).resolve() if work_root is not None else None
    if requested == "auto":
        wanted = [t for t in TIERS if (grading or t != "uid") and (allow_weak or t in SANDBOX_TIERS)]
    else:
        wanted = [requested]
    tried: list[str] = []
    for tier in wanted:
        why = _unavailable(tier)
        if why is None:
            candidate = Isolation(tier, hidden, work_root, tuple(tried), shutil.which("bwrap"))
            if tier in SANDBOX_TIERS:
                base, missing = pids_cgroup_base()
                if base is not None:
                    with_group = dataclasses.replace(candidate, pids_cgroup=base)
                    missing = probe(with_group) or ""
                    if not missing:
                        return with_group
                    missing = f"a sandbox in a pids cgroup did not work: {missing}"
                candidate = dataclasses.replace(candidate, pids_cgroup_missing=missing)
            why = probe(candidate)
            if why is None:
                return candidate
        tried.append(f"{tier}: {why}")
    if requested == "auto" and not allow_weak:
        raise IsolationError("no sandbox works here (" + "; ".join(tried) + "). Fix that (see "
                             "`jaxlings doctor --grading`), or " + weak_hint)
    raise IsolationError(f"isolation {requested!r} does not work here: {tried[-1]}")


@functools.lru_cache(maxsize=1)
def for_checks() -> Isolation:
    """The isolation `check`, `watch`, `verify` and the app use: the strongest that works,
    else a plain process (and the notice says so). JAXLINGS_ISOLATION=process forces the plain one."""
    requested = os.environ.get("JAXLINGS_ISOLATION", "auto").strip() or "auto"
    if requested not in ("auto", *SANDBOX_TIERS, "process"):
        requested = "auto"
    try:
        return choose(requested)
    except IsolationError as exc:
        return Isolation("process", tried=(str(exc),))

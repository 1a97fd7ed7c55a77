"""Start one command in a fresh sandbox built from user namespaces (no root needed).

Run by the trusted parent as `python -I -S launcher.py CONFIG_JSON -- ARGV...`;
it imports nothing but the standard library, so no folder a learner can write
is ever searched for modules. What it does:

0. First of all, when the config names a pids cgroup (`cgroup`: its cgroup.procs), move
   itself into it: everything it starts is then counted against that group's pids.max.
1. `unshare` a user, mount, pid, network, IPC and UTS namespace, mapping only
   the caller's own uid/gid (to uid 1000 inside): the learner gets no root,
   not even inside, and nothing on the host it did not already have. Run by
   root, the caller's uid would be host root, owner of the host's /dev nodes
   and more: there the user namespace is made by a helper process, and maps
   uid 1000 inside to an unprivileged host uid of its own (the config's
   `uid`), root to root for the set-up alone; the payload drops to 1000.
   Either way no process inside may create another user namespace
   (`user.max_user_namespaces` is 0 in ours).
2. Fork the namespace's init (pid 1). Init builds a new root on an empty tmpfs
   holding only what the config allows, each piece bound read-only (but for
   the folders the config names writable: the learner's own compilation
   cache), plus a private writable home and /tmp (tmpfs, size-limited, gone with the
   namespace), a minimal /dev and a /proc of the new pid namespace; then
   `pivot_root` into it and detaches the old root, so nothing else of the host
   remains reachable.
3. Init forks the payload, which execs the command with no capabilities left
   (uid 1000 is not root: `execve` drops them) and `no_new_privs`.
4. When the payload ends, init passes on its wait status and exits; the kernel
   then kills every process left in the pid namespace, detached or not. If the
   engine dies, this launcher notices it was re-parented and kills init.

Exit status: the payload's; death by a signal is reproduced as death by the
same signal, because the engine tells a crash or an out-of-memory kill from an
exit that way. Set-up failures exit 125 with one `jaxlings-sandbox:` line.
"""

import ctypes
import ctypes.util
import errno
import json
import os
import platform
import select
import signal
import struct
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PROC_MAX_USERNS = "/proc/sys/user/max_user_namespaces"
PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}
INNER_ID = 1000
SETUP_FAILED = 125

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


class SetupError(Exception):
    pass


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)} (errno {errno.errorcode.get(err, err)})")


def _mount(source, target, fstype, flags, data=None) -> None:
    _check(_libc.mount(_b(source), _b(target), _b(fstype), ctypes.c_ulong(flags), _b(data)),
           f"mount {source or fstype} on {target}")


def _b(text):
    return None if text is None else os.fsencode(text)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _locked_flags(path: str) -> int:
    """The flags a read-only remount must keep: a user namespace may not clear them."""
    st = os.statvfs(path)
    flags = 0
    for bit, name in ((MS_NOSUID, "ST_NOSUID"), (MS_NODEV, "ST_NODEV"), (MS_NOEXEC, "ST_NOEXEC")):
        if st.f_flag & getattr(os, name, 0):
            flags |= bit
    return flags


def _mkpath(root: str, inside: str, is_dir: bool) -> str:
    target = root + inside
    if is_dir:
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o644))
    return target


def _bind(root: str, source: str, inside: str, *, writable: bool = False) -> None:
    if os.path.islink(source):
        target = root + inside
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.readlink(source), target)
        return
    if not os.path.exists(source):
        return
    target = _mkpath(root, inside, os.path.isdir(source))
    _mount(source, target, None, MS_BIND | MS_REC)
    if not writable:
        _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | _locked_flags(target))


def _tmpfs(root: str, inside: str, size_mb: int, mode: str, owner: bool) -> None:
    target = _mkpath(root, inside, True)
    data = f"size={size_mb}m,mode={mode}" + (f",uid={INNER_ID},gid={INNER_ID}" if owner else "")
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, data)


def build_root(cfg: dict) -> None:
    """In init, before pivot_root: an empty root holding only what cfg allows."""
    root = cfg["root"]
    _mount("jaxlings", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755")
    # The private folders first: a Python installation under /tmp still gets bound inside them.
    _tmpfs(root, "/tmp", cfg["tmp_mb"], "0700", owner=True)
    _tmpfs(root, cfg["home"], cfg["home_mb"], "0700", owner=True)
    for source, inside in cfg["ro"]:
        _bind(root, source, inside)
    for source, inside in cfg.get("rw", ()):
        _bind(root, source, inside, writable=True)
    for inside in cfg.get("masks", ()):
        if os.path.isdir(root + inside):
            _mount("tmpfs", root + inside, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k,mode=0555")
    # /dev: a few harmless nodes bound from the host, nothing else. Read-only
    # binds: a device node on a read-only mount still reads and writes, but
    # nobody inside can chmod, chown or replace the host's node.
    _tmpfs(root, "/dev", 1, "0755", owner=False)
    for node in ("null", "zero", "full", "random", "urandom", *cfg.get("devices", ())):
        if os.path.exists("/dev/" + node):
            _bind(root, "/dev/" + node, "/dev/" + node)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    _tmpfs(root, "/dev/shm", cfg["shm_mb"], "1777", owner=False)
    _mount("proc", _mkpath(root, "/proc", True), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    os.chdir(root)
    if platform.machine() not in PIVOT_ROOT:
        raise SetupError(f"pivot_root: unknown system call number on {platform.machine()}")
    _check(_libc.syscall(ctypes.c_long(PIVOT_ROOT[platform.machine()]), b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")
    _mount(None, "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _no_more_user_namespaces()
    try:
        _libc.sethostname(b"jaxlings", 8)
    except OSError:
        pass


def _no_more_user_namespaces() -> None:
    """Nothing in our user namespace may create another one (a nested namespace
    would give the learner capabilities over mounts of its own making)."""
    try:
        _write(PROC_MAX_USERNS, "0")
    except OSError as exc:
        raise SetupError(f"cannot forbid nested user namespaces: {exc}") from None


def root_user_namespace(learner_uid: int) -> int:
    """Run by root: a user namespace mapping uid/gid 1000 to the unprivileged
    `learner_uid`, and root to root; returns an fd for it.

    A process may not write a map naming other users into its own namespace,
    so a helper makes the namespace, this process (root outside) writes the
    maps, and the helper, which holds every capability inside, sets
    user.max_user_namespaces to 0 there before it ends."""
    if learner_uid <= 0:
        raise SetupError(f"refusing to map the learner to host uid {learner_uid}")
    to_parent_r, to_parent_w = os.pipe()
    to_helper_r, to_helper_w = os.pipe()
    helper = os.fork()
    if helper == 0:
        os.close(to_parent_r)
        os.close(to_helper_w)
        try:
            _check(_libc.unshare(CLONE_NEWUSER), "unshare a user namespace")
            os.write(to_parent_w, b"u")
            if os.read(to_helper_r, 1) != b"m":
                os._exit(SETUP_FAILED)
            _no_more_user_namespaces()
            os.write(to_parent_w, b"k")
        except (SetupError, OSError) as exc:
            os.write(to_parent_w, f"!{exc}".encode()[:500])
        os.read(to_helper_r, 1)  # held open until the namespace has an fd outside
        os._exit(0)
    os.close(to_parent_w)
    os.close(to_helper_r)
    try:
        answer = os.read(to_parent_r, 512)
        if answer != b"u":
            raise SetupError(answer[1:].decode(errors="replace") or "the namespace helper died")
        _write(f"/proc/{helper}/uid_map", f"0 0 1\n{INNER_ID} {learner_uid} 1\n")
        _write(f"/proc/{helper}/gid_map", f"0 0 1\n{INNER_ID} {learner_uid} 1\n")
        os.write(to_helper_w, b"m")
        answer = os.read(to_parent_r, 512)
        if answer != b"k":
            raise SetupError(answer[1:].decode(errors="replace") or "the namespace helper died")
        return os.open(f"/proc/{helper}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(to_helper_w)
        os.close(to_parent_r)
        os.waitpid(helper, 0)


def _unshare(cfg: dict) -> None:
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if os.geteuid() == 0:
        userns = root_user_namespace(int(cfg.get("uid") or 0))
        try:
            _check(_libc.setns(userns, CLONE_NEWUSER), "enter the user namespace")
        finally:
            os.close(userns)
        _check(_libc.unshare(flags), "unshare")
    else:
        _check(_libc.unshare(flags | CLONE_NEWUSER), "unshare")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{INNER_ID} {uid} 1\n")
        _write("/proc/self/gid_map", f"{INNER_ID} {gid} 1\n")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)


def become_learner() -> None:
    """In the payload, before exec: uid 1000 and no supplementary groups."""
    if os.getuid() == 0:  # set up by root: drop to the learner (this also drops every capability)
        os.setgroups([])
        os.setresgid(INNER_ID, INNER_ID, INNER_ID)
        os.setresuid(INNER_ID, INNER_ID, INNER_ID)


CAP_VERSION_3 = 0x20080522


def drop_capabilities() -> None:
    """Empty effective, permitted and inheritable sets (and so the ambient set): what
    `execve` does for a non-root uid, for a payload that never execs (`zygote.py`)."""
    header = (ctypes.c_uint32 * 2)(CAP_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.capset(header, data), "drop capabilities")
    with open("/proc/self/status") as f:
        held = [line.split()[1] for line in f if line.startswith(("CapEff:", "CapPrm:", "CapAmb:"))]
    if any(int(h, 16) for h in held):
        raise SetupError(f"capabilities left after dropping them: {held}")
    # Changing uids made it undumpable, its /proc files root's: `execve` would make it dumpable again.
    _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)


def _init(cfg: dict, argv: list[str], env: dict, status_w: int, run_payload=None) -> None:
    """pid 1 of the new namespace: build the root, start the payload, pass on its end."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    try:
        build_root(cfg)
    except (SetupError, OSError) as exc:
        os.write(2, f"jaxlings-sandbox: {exc}\n".encode())
        os._exit(SETUP_FAILED)
    payload = os.fork()
    if payload == 0:
        try:
            become_learner()
            _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
            os.chdir(cfg["home"])
            if run_payload is not None:
                run_payload(argv, env)  # never returns
            os.execve(argv[0], argv, env)
        except (OSError, SetupError) as exc:
            os.write(2, f"jaxlings-sandbox: cannot start {argv[0]}: {exc}\n".encode())
        os._exit(SETUP_FAILED)
    _quiet_stdio()
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(SETUP_FAILED)
        except InterruptedError:
            continue
        if pid == payload:
            os.write(status_w, struct.pack("!i", status))
            # Exiting ends the namespace: the kernel kills every process left in it.
            os._exit(0)


def _quiet_stdio() -> None:
    """Let the payload alone hold the protocol pipes: EOF means the payload is gone."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)


def _pass_on(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else SETUP_FAILED)


def supervise_bwrap(argv: list[str], parent: int) -> None:
    """Run bubblewrap as our child: its --die-with-parent then follows this process,
    which is single-threaded, and this process follows the engine."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
    child = os.fork()
    if child == 0:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
        try:
            os.execv(argv[0], argv)
        except OSError as exc:
            os.write(2, f"jaxlings-sandbox: cannot start {argv[0]}: {exc}\n".encode())
        os._exit(SETUP_FAILED)
    _quiet_stdio()
    while True:
        signal.sigtimedwait({signal.SIGCHLD}, 1.0)
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            if 128 < code < 160:  # bubblewrap reports death by signal N as 128 + N
                status = code - 128
            _pass_on(status)
        if os.getppid() != parent:
            os.kill(child, signal.SIGKILL)
            os._exit(SETUP_FAILED)


def join_cgroup(procs: str) -> None:
    """Move this process into the child's pids cgroup before it starts anything: every
    task of the sandbox (helper, init, the learner's) is then counted against its pids.max."""
    _write(procs, str(os.getpid()))


def main(args: list[str], payload=None) -> None:
    """`payload(argv, env)`, when given, runs in place of `execve(argv)` (`zygote.py`)."""
    cfg = json.loads(args[0])
    argv = args[2:] if len(args) > 1 and args[1] == "--" else args[1:]
    env = dict(os.environ)
    parent = os.getppid()
    if cfg.get("cgroup"):
        try:
            join_cgroup(cfg["cgroup"])
        except OSError as exc:
            os.write(2, f"jaxlings-sandbox: cannot join the pids cgroup: {exc}\n".encode())
            os._exit(SETUP_FAILED)
    if cfg.get("mode") == "bwrap":
        supervise_bwrap(argv, parent)
    try:
        _unshare(cfg)
    except (SetupError, OSError) as exc:
        os.write(2, f"jaxlings-sandbox: {exc}\n".encode())
        os._exit(SETUP_FAILED)
    status_r, status_w = os.pipe()
    init = os.fork()
    if init == 0:
        os.close(status_r)
        _init(cfg, argv, env, status_w, payload)
        os._exit(SETUP_FAILED)
    os.close(status_w)
    _quiet_stdio()
    data = b""
    while True:
        ready, _, _ = select.select([status_r], [], [], 1.0)
        if ready:
            chunk = os.read(status_r, 4)
            data += chunk
            if not chunk or len(data) >= 4:
                break
        elif os.getppid() != parent:  # the engine died: so does everything in here
            os.kill(init, signal.SIGKILL)
            os._exit(SETUP_FAILED)
    _, init_status = os.waitpid(init, 0)
    if len(data) == 4:
        _pass_on(struct.unpack("!i", data)[0])
    _pass_on(init_status)


if __name__ == "__main__":
    main(sys.argv[1:])

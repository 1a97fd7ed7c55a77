"""What a sandboxed child is allowed: the folders bound in read-only, the paths masked, the
device nodes, and a scrubbed environment (`course.engine.isolation` builds the sandboxes)."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # course/
ENGINE_DIR = Path(__file__).resolve().parent
LAUNCHER = ENGINE_DIR / "launcher.py"
INSIDE_ROOT = "/jaxlings"  # where course/__init__.py and course/engine/ appear inside
INSIDE_HOME = "/home/learner"
INSIDE_INBOX = "/learner"
INSIDE_CACHE = "/xla-cache"  # the learner's own compilation cache, when the session keeps one
HOME_MB, TMP_MB, SHM_MB = 256, 256, 64
_KEEP_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TF_CPP_MIN_LOG_LEVEL", "OMP_NUM_THREADS")
_KEEP_PREFIXES = ("JAX_", "XLA_", "CUDA_", "NVIDIA_", "TPU_")
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")


@functools.lru_cache(maxsize=1)
def python_paths() -> tuple[str, ...]:
    """The folders of the Python installation the child runs: prefixes and module paths.

    Taken from this interpreter, minus anything inside the course tree that is
    not the interpreter's own prefix (a repository checkout on sys.path, '').
    """
    course_root = PACKAGE_DIR.parent
    prefixes = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.base_exec_prefix)]
    found: list[Path] = []
    modules = [Path(e) for e in sys.path if e and ("site-packages" in e or "dist-packages" in e)]
    modules += [Path(e) for e in sys.path if e and any(_within(Path(e), q) for q in prefixes)]
    for p in [*prefixes, *modules]:
        try:
            real = p.resolve()
        except OSError:
            continue
        if not p.is_absolute() or not real.exists():
            continue
        in_course = _within(real, course_root) and not any(_within(real, q.resolve()) for q in prefixes)
        if in_course or _within(real, PACKAGE_DIR):
            continue
        found += [p, real] if p != real else [p]
    exe = Path(sys.executable)
    found += [exe.parent.resolve(), Path(os.path.realpath(exe)).parent]
    return _outermost(found)


def _within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
        return True
    except ValueError:
        return False


def _outermost(paths: list[Path]) -> tuple[str, ...]:
    keep: list[Path] = []
    for p in sorted(set(paths), key=lambda q: len(q.parts)):
        if not any(_within(p, k) for k in keep):
            keep.append(p)
    return tuple(str(p) for p in keep if not any(_within(p, Path(s)) for s in _SYSTEM if Path(s).is_dir()))


def read_only_binds(inbox: Path) -> list[tuple[str, str]]:
    """(host path, path inside) pairs bound read-only."""
    binds = [(s, s) for s in _SYSTEM if os.path.lexists(s)]
    binds += [(s, s) for s in _ETC if os.path.exists(s)]
    binds += [(p, p) for p in python_paths()]
    if _devices():
        binds.append(("/sys", "/sys"))  # GPU runtimes read the PCI and NUMA layout there
    binds += [(str(PACKAGE_DIR / "__init__.py"), f"{INSIDE_ROOT}/course/__init__.py"),
              (str(ENGINE_DIR), f"{INSIDE_ROOT}/course/engine"),
              (str(inbox), INSIDE_INBOX)]
    return binds


def masked_paths() -> list[str]:
    """Parts of the course inside a bound Python folder (a non-editable install puts
    `course/`, checks and all, in site-packages): covered by an empty read-only folder."""
    from course import paths

    roots = dict.fromkeys([PACKAGE_DIR.parent, paths.course_root()])
    secret = ("solutions", "checks", "alternatives", "attacks", "tests", "lessons")
    course_parts = [PACKAGE_DIR, *(r / name for r in roots for name in secret)]
    bound = [Path(p) for p in python_paths()]
    return [str(c) for c in dict.fromkeys(course_parts) if any(_within(c, b) for b in bound) and c.is_dir()]


def _devices() -> list[str]:
    """Accelerator device nodes, so a GPU machine checks on its GPU."""
    try:
        return sorted(n for n in os.listdir("/dev") if n.startswith(("nvidia", "dri")) or n == "kfd")
    except OSError:
        return []


def child_env(*, home: str, tmp: str, extra: dict[str, str] | None = None,
              base: dict[str, str] | None = None) -> dict[str, str]:
    """A scrubbed environment: nothing of the caller's leaks in, nothing names the course."""
    base = dict(os.environ if base is None else base)
    named = [str(PACKAGE_DIR.parent)]
    for var in ("JAXLINGS_WORKSPACE", "JAXLINGS_COURSE_ROOT"):
        if base.get(var):
            named.append(base[var])
    env = {}
    for key, value in base.items():
        if key in _KEEP_ENV or key.startswith(_KEEP_PREFIXES):
            # A compilation cache the caller chose is theirs: a sandboxed child
            # neither sees it nor may write entries into it.
            if key == "JAX_COMPILATION_CACHE_DIR":
                continue
            if not any(n and n in value for n in named):
                env[key] = value
    env.update(PATH="/usr/local/bin:/usr/bin:/bin", HOME=home, TMPDIR=tmp, USER="learner",
               PYTHONDONTWRITEBYTECODE="1", PYTHONNOUSERSITE="1", PYTHONUNBUFFERED="1")
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env.update(extra or {})
    from course.engine.compile_flags import for_child

    return for_child(env)

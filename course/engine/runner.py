"""Running an exercise's hidden check: the one API the CLI, the app and the grader use.

Trust model (DESIGN.md): pytest runs the check module here, in the trusted
parent; the reference solution is imported here too; the learner's module is
imported only in a child process (`course.engine.sandbox`) that answers with plain
data. The verdict is built from pytest's own outcomes, collected by a plugin
object in this process, never from anything the child prints or writes.

pytest runs in-process (`pytest.main` with a collecting plugin, no terminal
reporter, output captured), so a long-lived `CheckSession` keeps pytest, JAX
and the reference modules warm and answers in well under a second.
"""


from __future__ import annotations

import ast
import hashlib
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from course.catalog import Exercise
from course.engine.ahead import RunAhead
from course.engine import compile_flags
from course.engine.caches import CompileCache, usable_cache, use_trusted_cache, workspace_compile_cache
from course.engine.checking import seed_line
from course.engine.isolation import Isolation, for_checks
from course.engine.check_run import ReferenceError_, _ResultCache, _Run
from course.engine.pytest_run import _PYTEST_LOCK, _Collector, _result, _run_pytest
from course.engine.results import CheckOutcome, ExerciseResult
from course.engine.sandbox import DEFAULT_MEMORY_MB, LearnerProcess, WarmPool, child_environment
from course.engine.settings import DEFAULT_TIMEOUT, READY_TIMEOUT, check_settings, draw_seed
from course.engine.words import _

__all__ = ["CheckSession", "run_exercise", "workspace_compile_cache"]


# -- the session -------------------------------------------------------------------


class CheckSession:
    """Runs checks; owns the warm child. Long-lived in `watch`, the app and the grader.

    `isolation` is the sandbox learner children run in (`course.engine.isolation`):
    "auto" (the default) takes the strongest that works here, once per process;
    None starts a plain child shaped only by `child_argv_prefix` (wraps the
    command), `child_env` (replaces the inherited environment) and `cwd` (its
    working directory; default a fresh temporary folder per child).
    `sandbox_slot` and `sandbox_copy` serve the grader's `uid` tier. `fork_children` forks
    the learner children from a zygote of the session's own (`course.engine.zygote`; the
    unshare tier only): about 2 CPU-seconds less per child, about 170 MiB more while it lasts.
    `run_ahead` runs each exercise's next check in the background as soon as one is over
    (`course.engine.ahead`; the app and the check server). `compile_cache`
    keeps compiled programs between processes (`workspace_compile_cache()`;
    default none). `warm` keeps a child ready for every run, one per child
    environment a check asks for (CHILD_ENV; the latest such one only), and
    for those checks the reference's own child too. `prestart` (an exercise)
    starts, now, the children that one check of it will need, for a session
    that runs only that check.
    """

    def __init__(
        self,
        *,
        warm: bool = True,
        child_argv_prefix: list[str] | tuple[str, ...] = (),
        child_env: dict[str, str] | None = None,
        cwd: str | os.PathLike | None = None,
        memory_mb: int = DEFAULT_MEMORY_MB,
        extra_check_dirs: tuple[Path, ...] | list[Path] = (),
        compile_cache: CompileCache | None = None,
        prestart: Exercise | None = None,
        prestart_file: str | os.PathLike | None = None,
        isolation: Isolation | str | None = "auto",
        sandbox_slot: int = 0,
        sandbox_copy: Path | None = None,
        fork_children: bool = False,
        run_ahead: bool = False,
    ) -> None:
        # Compiling faster, on every side of the check or on none (before any child's environment is made).
        compile_flags.adopt()
        # One probe per process ("auto"), shared by every session in it.
        self.isolation: Isolation | None = for_checks() if isolation == "auto" else isolation  # type: ignore
        self.sandbox_slot = sandbox_slot
        self.sandbox_copy = sandbox_copy
        self.child_argv_prefix = tuple(child_argv_prefix)
        self.child_env = child_env
        self.cwd = cwd
        self.memory_mb = memory_mb
        self.extra_check_dirs = tuple(Path(p) for p in extra_check_dirs)
        self.compile_cache = usable_cache(compile_cache, self._children_isolated(),
                                           getattr(self.isolation, "learner_cache_owner", None))
        self.zygote = self._start_zygote() if fork_children else None
        self._references: dict[tuple[str, int], Any] = {}
        self._reference_results: _ResultCache = _ResultCache()
        self._preload: dict[str, str] = {}  # what the next warm child imports ahead of time
        self._warm = warm
        self._pools: dict[tuple, WarmPool] = {}
        self._pool = self._pool_for({}, trusted=False)
        self._prestarted: dict[tuple, LearnerProcess] = {}
        self._closed = False
        self.ahead = RunAhead(self) if run_ahead and warm else None
        if self._pool is not None:
            self._pool.prestart()
        if prestart is not None:
            self._prestart_for(prestart, prestart_file)
        if self.compile_cache is not None and self.compile_cache.trusted is not None:
            use_trusted_cache(self.compile_cache.trusted)
        # Learner programs are read and run by the evaluator (course.engine.evaluator), in the
        # learner's sandbox where that is one; a warm session starts it ahead, like its children.
        from course.engine import evaluator

        evaluator.use_isolation(self.isolation if self._children_isolated() else None)
        if warm or prestart is not None:
            evaluator.shared().prestart()
            _warm_parent()

    def wait_warm(self, timeout: float = READY_TIMEOUT) -> bool:
        """Block until the next check will get a ready child and the check run ahead is over, as they
        are while the learner edits (False without a warm pool)."""
        if self.ahead is not None:
            self.ahead.wait(timeout)
        return self._pool.wait_ready(timeout) if self._pool is not None else False

    def prepare(self, exercise: Exercise, learner_file: str | os.PathLike | None = None) -> None:
        """The learner opened `exercise`: with `run_ahead`, its first check starts now, ahead."""
        if self.ahead is not None and not self._closed:
            path = Path(learner_file) if learner_file is not None else exercise.exercise_path()
            self.ahead.start(exercise, path.resolve())

    # -- children --------------------------------------------------------------
    def _children_isolated(self) -> bool:
        """Whether learner children run where the workspace's .jaxlings/ does not exist (a sandbox)."""
        return bool(getattr(getattr(self, "isolation", None), "sandboxed", False))

    def _start_zygote(self):
        """A zygote of this session's own (`course.engine.zygote`), where its children are
        sandboxed by the unshare tier: started with the environment they get, it ends with it."""
        if getattr(self.isolation, "tier", None) != "unshare":
            return None
        # Importing JAX sets variables in this process's environment, which children inherit:
        # settled first, so that the children started after it match the zygote's environment.
        import jax  # noqa: F401

        from course.engine.caches import cache_env
        from course.engine.isolation import INSIDE_CACHE, INSIDE_HOME, child_env
        from course.engine.zygote import Zygote

        learner_cache = self.compile_cache is not None and self.compile_cache.learner is not None
        return Zygote(child_env(home=INSIDE_HOME, tmp="/tmp", base=self.child_env,
                                extra=cache_env(Path(INSIDE_CACHE)) if learner_cache else None))

    def _new_child(self, extra_env: dict[str, str], trusted: bool = False, cache: bool = True) -> LearnerProcess:
        if not trusted and self.isolation is not None:
            learner_cache = self.compile_cache.learner if self.compile_cache is not None and cache else None
            box = self.isolation.sandbox(slot=self.sandbox_slot, copy=self.sandbox_copy, cache=learner_cache)
            try:
                return LearnerProcess(env=box.env(extra_env, base=self.child_env), sandbox=box,
                                      argv_prefix=self.child_argv_prefix, memory_mb=self.memory_mb,
                                      zygote=self.zygote)
            except BaseException:
                box.close()
                raise
        cache_env = ({} if self.compile_cache is None or not (cache or trusted) else
                     self.compile_cache.trusted_env() if trusted else self.compile_cache.learner_env())
        return LearnerProcess(
            env=child_environment(self.child_env, {**cache_env, **extra_env}),
            argv_prefix=() if trusted else self.child_argv_prefix,
            cwd=None if trusted else self.cwd,
            memory_mb=self.memory_mb,
        )

    def _pool_for(self, env: dict[str, str], *, trusted: bool, fresh: bool = False) -> WarmPool | None:
        if not self._warm:
            return None
        key = _child_key(env, "fresh" if fresh else trusted)
        pool = self._pools.get(key)
        if pool is None:
            # Warm children cost memory: besides the default, only the latest environment keeps its own.
            for old in [k for k in self._pools if k[0] and k[0] != key[0]]:
                self._pools.pop(old).close()
            env = dict(env)
            if trusted:
                pool = WarmPool(lambda: self._new_child(env, trusted=True))
            elif fresh:
                pool = WarmPool(lambda: self._new_child({**self._preload, **env}, cache=False))
            else:
                pool = WarmPool(lambda: self._new_child({**self._preload, **env}))
            self._pools[key] = pool
        return pool

    def _prestart_for(self, exercise: Exercise, learner_file: str | os.PathLike | None) -> None:
        try:
            settings = check_settings(self._find_check(exercise, ()))
            env = settings.child_env
        except (OSError, SyntaxError, ValueError, TypeError):
            return  # run() reports it
        path = Path(learner_file) if learner_file is not None else exercise.exercise_path()
        self._prestarted[_child_key(env, False)] = self._new_child({**_preload_env(path), **env})
        if env:
            self._prestarted[_child_key(env, True)] = self._new_child(env, trusted=True)
        if settings.fresh_learners:
            self._prestarted[_child_key(env, "fresh")] = self._new_child({**_preload_env(path), **env}, cache=False)

    def _take_child(self, extra_env: dict[str, str]) -> LearnerProcess:
        proc = self._prestarted.pop(_child_key(extra_env, False), None)
        if proc is not None:
            return proc
        pool = self._pool_for(extra_env, trusted=False)
        return pool.take() if pool is not None else self._new_child({**self._preload, **extra_env})

    def _fresh_child(self, learner_file: Path, extra_env: dict[str, str]) -> LearnerProcess:
        """A learner child that shares no cache with earlier ones (`LearnerProxy.restart`)."""
        proc = self._prestarted.pop(_child_key(extra_env, "fresh"), None)
        if proc is not None:
            return proc
        pool = self._pool_for(extra_env, trusted=False, fresh=True)
        return pool.take() if pool is not None else self._new_child({**_preload_env(learner_file), **extra_env},
                                                                    cache=False)

    def _ahead_child(self, learner_file: Path, env: dict[str, str], *, trusted: bool = False,
                     fresh: bool = False) -> LearnerProcess:
        """A child of its own for a check run ahead: the warm ones stay ready for the real check."""
        if trusted:
            return self._new_child(env, trusted=True)
        return self._new_child({**_preload_env(learner_file), **env}, cache=not fresh)

    def _take_trusted_child(self, env: dict[str, str]) -> LearnerProcess:
        proc = self._prestarted.pop(_child_key(env, True), None)
        if proc is not None:
            return proc
        pool = self._pool_for(env, trusted=True)
        return pool.take() if pool is not None else self._new_child(env, trusted=True)

    def _reference_module(self, path: Path) -> tuple[Any, str]:
        """The imported reference and its identity (path, mtime and a hash of its source)."""
        key = (str(path), path.stat().st_mtime_ns)
        if key not in self._references:
            try:
                source = path.read_bytes()
            except OSError as e:
                raise ReferenceError_(f"cannot read the reference solution {path}: {e}") from e
            name = f"jaxlings_reference_{path.stem}_{len(self._references)}"
            spec = importlib.util.spec_from_file_location(name, path)
            if spec is None or spec.loader is None:
                raise ReferenceError_(f"cannot import the reference solution {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except Exception as e:
                sys.modules.pop(name, None)
                raise ReferenceError_(f"the reference solution {path} failed to import: {e!r}") from e
            identity = f"{path}\0{key[1]}\0{hashlib.sha256(source).hexdigest()}"
            self._references[key] = (module, identity)
        return self._references[key]

    def _find_check(self, exercise: Exercise, extra_dirs: tuple[Path, ...]) -> Path:
        for d in (*extra_dirs, *self.extra_check_dirs):
            candidate = Path(d) / f"{exercise.check}.py"
            if candidate.is_file():
                return candidate
        return exercise.check_path()

    # -- running -----------------------------------------------------------------
    def run(
        self,
        exercise: Exercise,
        *,
        learner_file: str | os.PathLike | None = None,
        seed: int | None = None,
        extra_check_dirs: tuple | list = (),
        env: dict[str, str] | None = None,
        first_failure: bool = False,
        on_outcome: Callable[[CheckOutcome], None] | None = None,
    ) -> ExerciseResult:
        """Run the exercise's check on `learner_file`. With `first_failure`, the check's tests
        stop at the first one that fails (the verdict is the same; later tests are not run).
        `on_outcome` is told each test's outcome as it lands, on the thread that runs the check;
        the result returned is the verdict."""
        if self._closed:
            raise RuntimeError("this CheckSession is closed")
        learner_path = Path(learner_file) if learner_file is not None else exercise.exercise_path()
        learner_path = learner_path.resolve()
        plain = not env and not extra_check_dirs and not first_failure
        if self.ahead is not None:
            self.ahead.stop()
            if seed is None and plain:
                seed = self.ahead.seed_for(exercise, learner_path)
        result = self._check(exercise, learner_path, seed, extra_check_dirs=extra_check_dirs, env=env,
                             first_failure=first_failure, on_outcome=on_outcome)
        if self.ahead is not None and plain:
            self.ahead.start(exercise, learner_path)
        return result

    def _check(self, exercise: Exercise, learner_path: Path, seed: int | None, *, extra_check_dirs: tuple | list = (),
               env: dict[str, str] | None = None, first_failure: bool = False,
               on_outcome: Callable[[CheckOutcome], None] | None = None, ahead: RunAhead | None = None,
               ) -> ExerciseResult:
        start = time.monotonic()
        seed = draw_seed(seed)

        def early(cause: str, message: str) -> ExerciseResult:
            message = f"{message}\n{seed_line(seed)}"
            outcome = CheckOutcome("setup", "error", cause, message, 0.0)
            return ExerciseResult(exercise.name, False, cause, message, [outcome], time.monotonic() - start, seed)

        check_path = self._find_check(exercise, tuple(Path(p) for p in extra_check_dirs))
        self._preload = _preload_env(learner_path)  # for the next child: the learner checks again soon
        if not learner_path.is_file():
            return early("import_error", _("{file} does not exist. `jaxlings reset {exercise}` restores the starter "
                                           "file.").format(file=_display(learner_path, exercise),
                                                           exercise=exercise.name))
        if not check_path.is_file():
            return early("check_error", f"the check module {check_path.name} is missing from this course.")
        try:
            settings = check_settings(check_path)
        except (SyntaxError, ValueError, TypeError) as e:
            return early("check_error", f"the check module {check_path.name} has unreadable settings: {e}")
        budget = exercise.timeout or settings.timeout or DEFAULT_TIMEOUT
        child_env = {**settings.child_env, **(env or {})}
        run = _Run(self, exercise, learner_path, exercise.solution_path(), seed, budget, child_env,
                   _display(learner_path, exercise), settings, ahead=ahead is not None)
        collector = _Collector(settings.messages, on_outcome)
        if settings.fresh_learners:
            self._pool_for(child_env, trusted=False, fresh=True)  # ready for the next run (`_refill`)
        try:
            with _PYTEST_LOCK:
                if ahead is not None:
                    ahead.started(run)
                exit_code = _run_pytest(check_path, run, collector, seed, first_failure)
        finally:
            run.close()
            output = run.learner.output()  # after close: everything the learner printed has been read
            self._refill()
            _bound_compiled_code()
        return _result(exercise, collector, exit_code, seed, time.monotonic() - start, output, run.trace)

    def _refill(self) -> None:
        """Start the children the next check will take, now that this one is over."""
        if not self._closed:
            for pool in self._pools.values():
                pool.prestart()

    def close(self) -> None:
        self._closed = True
        if self.ahead is not None:
            self.ahead.stop()
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
        for proc in self._prestarted.values():
            proc.close()
        self._prestarted.clear()
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None

    def __enter__(self) -> "CheckSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _display(path: Path, exercise: Exercise) -> str:
    """The learner's file as they know it: relative to the workspace when inside it."""
    from course.catalog import default_workspace

    try:
        return str(path.relative_to(default_workspace(exercise.root).resolve()))
    except ValueError:
        return path.name


def _child_key(env: dict[str, str], trusted: bool | str) -> tuple:
    return (tuple(sorted(env.items())), trusted)


def _preload_env(path: Path) -> dict[str, str]:
    """Which heavy libraries (`child.PRELOADABLE`) the learner's file imports, for a child to import early."""
    from course.engine.child import PRELOADABLE

    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return {}
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    wanted = sorted({m for m in PRELOADABLE for n in names if n == m or n.startswith(m + ".")})
    return {"JAXLINGS_PRELOAD": ",".join(wanted)} if wanted else {}


def _memory_maps() -> int | None:
    """How many memory mappings this process holds (Linux), None where that cannot be read."""
    try:
        with open("/proc/self/maps", "rb") as f:
            return sum(1 for _ in f)
    except OSError:
        return None


def _map_limit() -> int:
    try:
        with open("/proc/sys/vm/max_map_count", "rb") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return 65530  # Linux's default


def _bound_compiled_code(limit: int | None = None) -> bool:
    """Drop JAX's compiled programs once they hold half the mappings the kernel allows.

    Every program XLA compiles here stays mapped while JAX's caches hold it. A
    reference that runs eagerly through code that makes new functions on every
    call (optax.MultiSteps' conditionals, say) compiles anew on every check, and
    a long-lived session (the app, the check server, a grading worker) would
    reach the kernel's limit after about a hundred checks and crash inside
    XLA. Dropping the caches costs the next check a few compilations. True if
    they were dropped."""
    maps = _memory_maps()
    if maps is None or maps < (limit if limit is not None else _map_limit() // 2):
        return False
    import gc

    import jax

    # Learners' programs are compiled in the evaluator process (program_reader), never here.
    jax.clear_caches()
    gc.collect()
    return True


def _warm_parent() -> None:
    import pytest  # noqa: F401
    import numpy  # noqa: F401
    import jax
    import jax.numpy as jnp
    import optax  # noqa: F401
    from flax import nnx  # noqa: F401

    jax.block_until_ready(jnp.zeros(1) + 1)


def run_exercise(exercise: Exercise, *, compile_cache: CompileCache | None | str = "workspace",
                 **kw: Any) -> ExerciseResult:
    """Check one exercise in a short-lived session, as a one-off `jaxlings check` does.

    Its one child starts at once, while this process imports pytest and JAX;
    compiled programs come from the workspace's caches unless `compile_cache`
    says otherwise (None: no cache).
    """
    if compile_cache == "workspace":
        compile_cache = workspace_compile_cache()
    with CheckSession(warm=False, prestart=exercise, prestart_file=kw.get("learner_file"),
                      compile_cache=compile_cache) as session:
        return session.run(exercise, **kw)

"""What a check keeps between runs to answer faster, and who may write it."""

from __future__ import annotations

import os
import shutil
import stat
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from course.catalog import load_catalog
from course.engine import caches, runner
from course.engine.runner import CheckSession, workspace_compile_cache

FIXTURE = Path(__file__).parent / "fixtures" / "course"

CORRECT = "import jax.numpy as jnp\n\ndef scale(x, alpha):\n    return jnp.asarray(x) * alpha + 1\n"


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    learner = tmp_path / "learner.py"
    learner.write_text(CORRECT)
    return root, learner


def _with_check(root: Path, source: str) -> Path:
    folder = root / "own_checks"
    folder.mkdir(exist_ok=True)
    (folder / "test_fx_scale.py").write_text(textwrap.dedent(source))
    return folder


def test_learner_children_cache_programs_in_a_folder_of_their_own(course, tmp_path):
    root, learner = course
    state = tmp_path / "ws" / ".jaxlings"
    state.parent.mkdir()  # a workspace that exists: a sweep removes the caches of those that do not
    cache = workspace_compile_cache(state)
    checks = _with_check(root, """
        from course.engine.checking import fail

        def _cache_dir(module):
            import os
            import jax
            import jax.numpy as jnp

            jax.jit(lambda v: v * 3 + 1)(jnp.arange(5.0)).block_until_ready()
            return os.environ.get("JAX_COMPILATION_CACHE_DIR", "")

        def test_report(learner):
            fail("CACHE=" + learner.probe(_cache_dir))
    """)
    exercise = load_catalog(root).exercise("fx_scale")
    with CheckSession(warm=False, compile_cache=cache, isolation=None) as session:
        result = session.run(exercise, learner_file=learner, extra_check_dirs=[checks])
        assert session.compile_cache.trusted is None  # no sandbox here: the child could write it
    reported = result.message.split("CACHE=", 1)[1].splitlines()[0]
    assert reported == str(cache.learner)
    assert str(state) not in reported and str(tmp_path / "ws") not in reported
    assert stat.S_IMODE(cache.learner.stat().st_mode) == 0o700
    assert any(p.name.endswith("-cache") for p in cache.learner.iterdir())  # the probe's program was kept
    assert not (state / "xla-cache").exists()
    shutil.rmtree(cache.learner)


@pytest.mark.parametrize("tier", ["bubblewrap", "unshare"])
def test_a_sandboxed_child_writes_only_its_own_cache_and_under_a_neutral_name(course, tmp_path, tier):
    from course.engine.isolation import IsolationError, choose

    try:
        isolation = choose(tier)
    except IsolationError as exc:
        pytest.skip(f"{tier} is not available here: {exc}")
    root, learner = course
    state = tmp_path / "ws" / ".jaxlings"
    state.parent.mkdir()  # a workspace that exists: a sweep removes the caches of those that do not
    cache = workspace_compile_cache(state)
    checks = _with_check(root, """
        from course.engine.checking import fail

        def _cache_dir(module):
            import os
            import jax
            import jax.numpy as jnp

            jax.jit(lambda v: v * 5 - 2)(jnp.arange(7.0)).block_until_ready()
            where = os.environ.get("JAX_COMPILATION_CACHE_DIR", "")
            return {"where": where, "entries": sorted(os.listdir(where)) if where else [],
                    "trusted_visible": os.path.exists(%r)}

        def test_report(learner):
            fail("CACHE=" + repr(learner.probe(_cache_dir)))
    """ % str(cache.trusted))
    exercise = load_catalog(root).exercise("fx_scale")
    with CheckSession(warm=False, compile_cache=cache, isolation=isolation) as session:
        result = session.run(exercise, learner_file=learner, extra_check_dirs=[checks])
    reported = eval(result.message.split("CACHE=", 1)[1].splitlines()[0])  # noqa: S307 - our own probe's repr
    assert reported["where"] == "/xla-cache" and not reported["trusted_visible"]
    kept = {p.name for p in cache.learner.iterdir()}
    assert kept and set(reported["entries"]) <= kept  # what the child wrote is on the host, in the learner's folder
    assert not cache.trusted.exists() or not any(cache.trusted.iterdir())  # the trusted folder got nothing
    shutil.rmtree(cache.learner)


def test_the_trusted_cache_only_where_children_cannot_write_it(course, tmp_path, monkeypatch):
    root, learner = course
    used = []
    monkeypatch.setattr(runner, "use_trusted_cache", used.append)  # this process's JAX stays as it is
    (tmp_path / "ws").mkdir()  # a workspace that exists, as a learner's does
    cache = workspace_compile_cache(tmp_path / "ws" / ".jaxlings")

    sandboxed = SimpleNamespace(sandboxed=True)  # learner children that cannot reach the workspace
    with CheckSession(warm=False, compile_cache=cache, isolation=sandboxed) as session:
        assert session.compile_cache.trusted == cache.trusted and session.compile_cache.learner == cache.learner
    assert used == [cache.trusted]
    assert stat.S_IMODE(cache.trusted.stat().st_mode) == 0o700
    with CheckSession(warm=False, compile_cache=cache, isolation=None) as session:
        assert session.compile_cache.trusted is None
    assert used == [cache.trusted]
    if cache.learner.exists():
        shutil.rmtree(cache.learner)


def test_reference_results_are_reused_for_identical_inputs_and_never_shared(course):
    root, learner = course
    checks = _with_check(root, """
        import numpy as np

        from course.engine.checking import assert_close

        def test_same_question_twice(learner, reference, rng):
            x = rng.normal(size=(3, 2)).astype(np.float32)
            first = reference.call("scale", x, 2.0)
            first[...] = 0  # a check may change what it got
            again = reference.call("scale", x.copy(), 2.0)
            assert_close(again, x * 2 + 1, what="the reference's answer the second time")
            other = reference.call("scale", x, 3.0)
            assert_close(other, x * 3 + 1, what="the reference's answer to another question")
    """)
    exercise = load_catalog(root).exercise("fx_scale")
    with CheckSession(warm=False) as session:
        result = session.run(exercise, learner_file=learner, extra_check_dirs=[checks])
        assert result.passed, result.message
        assert session._reference_results.hits == 1


def test_the_next_warm_child_imports_the_heavy_libraries_the_learner_uses(course):
    root, learner = course
    learner.write_text("import sys\nEARLY = 'torch' in sys.modules\nimport torch\n" + CORRECT)
    checks = _with_check(root, """
        from course.engine.checking import fail

        def _early(module):
            return module.EARLY

        def test_report(learner):
            fail(f"EARLY={learner.probe(_early)}")
    """)
    exercise = load_catalog(root).exercise("fx_scale")
    with CheckSession() as session:
        first = session.run(exercise, learner_file=learner, extra_check_dirs=[checks])
        session.wait_warm()
        second = session.run(exercise, learner_file=learner, extra_check_dirs=[checks])
    assert "EARLY=False" in first.message, first.message
    assert "EARLY=True" in second.message, second.message


def test_a_check_with_its_own_environment_gets_warm_children_the_next_time(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root)
    exercise = load_catalog(root).exercise("fx_devices")
    learner = exercise.solution_path()
    with CheckSession() as session:
        first = session.run(exercise, learner_file=learner)
        assert first.passed, first.message
        ready = {key: pool for key, pool in session._pools.items() if key[0]}
        # One pool for the learner's children and one for the reference's, both with this environment.
        assert sorted(trusted for _, trusted in ready) == [False, True]
        assert all(dict(env) == {"XLA_FLAGS": "--xla_force_host_platform_device_count=3"} for env, _ in ready)
        assert all(pool.wait_ready(120) for pool in ready.values())
        second = session.run(exercise, learner_file=learner)
        assert second.passed, second.message


# -- bounds and leftovers ---------------------------------------------------------------


def _entry(path: Path, size: int, age_s: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    when = time.time() - age_s
    os.utime(path, (when, when))
    return path


def test_the_trim_bounds_subfolders_too_oldest_first_and_follows_no_link(tmp_path):
    cache = tmp_path / "cache"
    outside = _entry(tmp_path / "outside" / "keep.bin", 5000, 9000)
    old_deep = _entry(cache / "a" / "b" / "old.bin", 4000, 5000)
    old_top = _entry(cache / "older.bin", 4000, 4000)
    new_deep = _entry(cache / "a" / "new.bin", 4000, 10)
    newest = _entry(cache / "newest.bin", 4000, 1)
    (cache / "link").symlink_to(tmp_path / "outside", target_is_directory=True)

    caches.trim(cache, max_bytes=9000)

    assert not old_deep.exists() and not old_top.exists()
    assert new_deep.exists() and newest.exists()
    assert not (cache / "a" / "b").exists()  # emptied, so gone
    assert outside.exists() and outside.stat().st_size == 5000  # the link was not followed
    total = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file() and not p.is_symlink())
    assert total <= 9000


def test_the_trusted_cache_is_trimmed_with_its_subfolders_when_a_session_starts(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    monkeypatch.setattr(caches, "CACHE_MAX_BYTES", 10_000)
    monkeypatch.setattr(caches.trim, "__defaults__", (10_000,))
    cache = workspace_compile_cache(tmp_path / "ws" / ".jaxlings")
    old = _entry(cache.trusted / "sub" / "old.bin", 8000, 1000)
    new = _entry(cache.trusted / "new.bin", 8000, 1)
    assert caches.usable_cache(cache, isolated=True).trusted == cache.trusted
    assert new.exists() and not old.exists()


def test_the_learner_caches_of_deleted_workspaces_are_removed_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    kept_ws, gone_ws = tmp_path / "kept", tmp_path / "gone"
    kept = workspace_compile_cache(kept_ws / ".jaxlings")
    gone = workspace_compile_cache(gone_ws / ".jaxlings")
    assert kept.learner.parent == tmp_path / "user-cache" / "jaxlings"
    for cache in (kept, gone):
        cache.trusted.parent.mkdir(parents=True)  # the workspace and its state folder
        assert caches.usable_cache(cache, isolated=False) is not None
        _entry(cache.learner / "sub" / "entry.bin", 100, 0)
    root = kept.learner.parent
    assert (root / (gone.learner.name + ".workspace")).read_text() == str((gone_ws / ".jaxlings").resolve())
    # Things that are not our learner caches, or whose owner we cannot tell yet.
    strangers = [root / "learner-xla-notours", root / "something-else", root / ("learner-xla-" + "0" * 16)]
    for folder in strangers:
        _entry(folder / "entry.bin", 10, 0)

    shutil.rmtree(gone_ws / ".jaxlings")  # the workspace itself still exists: its cache stays
    assert caches.sweep_orphans() == []
    assert gone.learner.exists()

    stale = root / ("learner-xla-" + "1" * 16)  # no marker: from before markers, untouched for weeks
    _entry(stale / "entry.bin", 10, 0)
    weeks_ago = time.time() - 30 * 24 * 3600
    os.utime(stale, (weeks_ago, weeks_ago))

    shutil.rmtree(gone_ws)
    assert caches.usable_cache(kept, isolated=False) is not None  # a session elsewhere starts: it sweeps
    assert not gone.learner.exists() and not (root / (gone.learner.name + ".workspace")).exists()
    assert not stale.exists()
    assert (kept.learner / "sub" / "entry.bin").exists()
    assert all((folder / "entry.bin").exists() for folder in strangers)


def test_a_learner_cache_whose_marker_names_another_folder_is_left_alone(tmp_path, monkeypatch):
    """The learner's folder is writable from the learner's code; its marker lies beside it, and a
    marker that does not match its folder's name decides nothing."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    cache = workspace_compile_cache(tmp_path / "ws" / ".jaxlings")
    (tmp_path / "ws").mkdir()
    assert caches.usable_cache(cache, isolated=False) is not None
    marker = cache.learner.with_name(cache.learner.name + ".workspace")
    marker.write_text(str(tmp_path / "never-existed" / ".jaxlings"))
    assert caches.sweep_orphans() == []
    assert cache.learner.exists()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="handing a folder to another uid needs root")
def test_a_learner_cache_handed_to_the_sandbox_uid_serves_the_next_session(tmp_path, monkeypatch):
    """Run as root, a sandbox hands the learner's cache to the uid its learner runs as. The next
    session on the workspace must keep using that folder (it compiled every learner program
    afresh before), while a trusted folder owned by anyone else, and a learner folder owned by
    a third uid, are still refused."""
    from course.engine.isolation import SANDBOX_HOST_UID, Isolation

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    owner = Isolation("unshare").learner_cache_owner
    assert owner == SANDBOX_HOST_UID
    assert Isolation("process").learner_cache_owner is None and Isolation("uid").learner_cache_owner is None
    cache = workspace_compile_cache(tmp_path / "ws" / ".jaxlings")
    cache.trusted.parent.mkdir(parents=True)
    first = caches.usable_cache(cache, isolated=True, learner_owner=owner)
    assert first.learner == cache.learner and first.trusted == cache.trusted
    os.chown(cache.learner, owner, owner)  # what Sandbox._set_up does for the learner's processes
    entry = _entry(cache.learner / "entry.bin", 10, 0)

    again = caches.usable_cache(cache, isolated=True, learner_owner=owner)
    assert again.learner == cache.learner and entry.exists()
    assert caches.usable_cache(cache, isolated=True).learner is None  # no owner named: not ours

    os.chown(cache.learner, owner + 1, owner + 1)
    assert caches.usable_cache(cache, isolated=True, learner_owner=owner).learner is None
    os.chown(cache.trusted, owner, owner)
    assert caches.usable_cache(cache, isolated=True, learner_owner=owner) is None

"""Checks for pure_state: a running mean as update(state, batch) -> (state, mean),
run under jax.jit, replayed from old states and restarted from init_state()."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail


def probe_run(module, batches):
    import jax

    update = jax.jit(module.update)
    state = module.init_state()
    means = []
    for batch in batches:
        state, mean = update(state, jax.numpy.asarray(batch))
        means.append(mean)
    return means


def probe_replay(module, first, second):
    """Update an old state twice with the same batch, and restart from init_state()."""
    import jax

    update = jax.jit(module.update)
    s0 = module.init_state()
    s1, _ = update(s0, jax.numpy.asarray(first))
    _, m_a = update(s1, jax.numpy.asarray(second))
    _, m_b = update(s1, jax.numpy.asarray(second))
    _, m_from_start = update(s0, jax.numpy.asarray(second))
    _, m_fresh = update(module.init_state(), jax.numpy.asarray(second))
    return {"again": [m_a, m_b], "old_state": [m_from_start, m_fresh]}


def _batches(rng, count):
    return [(rng.standard_normal(int(rng.integers(1, 9))) * 3 + rng.uniform(-2, 2)).astype(np.float32)
            for _ in range(count)]


def test_running_mean_under_jit(learner, reference, rng):
    batches = _batches(rng, int(rng.integers(4, 8)))
    sizes = [len(b) for b in batches]
    got = learner.probe(probe_run, batches)
    want = reference.probe(probe_run, batches)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, what=f"the mean returned by the jitted update #{i + 1} (batch sizes {sizes})", rtol=1e-5)


def test_two_runs_from_init_state_agree(learner, reference, rng):
    batches = _batches(rng, 3)
    first = learner.probe(probe_run, batches)
    second = learner.probe(probe_run, batches)
    for i, (a, b) in enumerate(zip(first, second)):
        if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-6):
            fail(
                f"Running the same {len(batches)} batches twice from init_state() gave different means at "
                f"update #{i + 1} ({a} then {b}): the result depends on something other than the state "
                "passed in (a global or an attribute?)."
            )
    assert_close(first[-1], reference.probe(probe_run, batches)[-1], what="the final mean")


def test_old_states_stay_valid(learner, reference, rng):
    first, second = _batches(rng, 2)
    got = learner.probe(probe_replay, first, second)
    want = reference.probe(probe_replay, first, second)
    a, b = got["again"]
    if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-6):
        fail(f"update(state, batch) called twice with the same state and batch gave {a} then {b}: "
             "update must not change anything outside its return value.")
    assert_close(a, want["again"][0], what="update(state_after_first_batch, second_batch)")
    assert_close(got["old_state"][0], want["old_state"][0],
                 what="update(init_state(), batch) after other updates were made")
    assert_close(got["old_state"][1], want["old_state"][1], what="update on a fresh init_state()")

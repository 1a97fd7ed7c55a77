"""Checks for pure_state: a running mean as update(state, batch) -> (state, mean).

Evidence: the learner's init_state() as arrays and `update` lowered under
jax.jit for a few batch lengths. The check chains those programs here, on
batches the learner's process never sees, and compares every mean with the
running mean computed here. Called eagerly in the child, `update` must also
leave the state it is given as it was and give the same answer twice.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail
from course.engine.evidence import run_lowered
from course.engine.words import _

# Batch lengths come from this set, so the programs compile once per length.
LENGTHS = (3, 5, 8)


def probe_programs(module, lengths):
    import jax
    import jax.numpy as jnp

    state = module.init_state()
    leaves = jax.tree.leaves(state)
    specs = jax.tree.map(lambda v: jax.ShapeDtypeStruct(jnp.shape(v), jnp.result_type(v)), state)
    update = jax.jit(module.update, keep_unused=True)
    programs = {str(n): update.lower(specs, jax.ShapeDtypeStruct((n,), jnp.float32)).as_text() for n in lengths}
    return {"init": [jnp.asarray(v) for v in leaves], "programs": programs}


def probe_eager(module, batches):
    """`update` called without jit: the state passed in, read before and after each call."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    def snapshot(state):
        return [np.array(v) for v in jax.tree.leaves(state)]

    state = module.init_state()
    means, given_before, given_after = [], [], []
    for batch in batches:
        before = snapshot(state)
        new_state, mean = module.update(state, jnp.asarray(batch))
        given_before.append(before)
        given_after.append(snapshot(state))
        means.append(mean)
        state = new_state
    # The last state again: a pure update gives the same mean twice.
    _, again = module.update(state, jnp.asarray(batches[0]))
    _, again_2 = module.update(state, jnp.asarray(batches[0]))
    return {"means": means, "before": given_before, "after": given_after, "again": [again, again_2]}


def _batches(rng, count):
    return [(rng.standard_normal(int(rng.choice(LENGTHS))) * 3 + rng.uniform(-2, 2)).astype(np.float32)
            for _ in range(count)]


def _running_means(batches):
    values = np.concatenate([b.astype(np.float64) for b in batches])
    ends = np.cumsum([len(b) for b in batches])
    return [values[:e].mean() for e in ends]


def _programs(learner):
    got = learner.probe(probe_programs, list(LENGTHS))
    if not isinstance(got["init"], list) or not got["init"]:
        fail(_("init_state() returned no arrays: return a pytree of JAX arrays (e.g. a dict of a count and a total)."))
    return [np.asarray(v) for v in got["init"]], got["programs"]


def _step(program, state, batch, call):
    out = run_lowered(program, [*state, batch], what=call)
    if len(out) != len(state) + 1:
        fail(_("{call} returned {n} state arrays and a mean; init_state() has {want}: "
               "new_state must have the same structure as state.").format(
            call=call, n=len(out) - 1, want=len(state)))
    for i, (old, new) in enumerate(zip(state, out[:-1])):
        old, new = np.asarray(old), np.asarray(new)
        if (old.shape, old.dtype) != (new.shape, new.dtype):
            fail(_("{call}: state array #{i} came in with shape {shape} and dtype {dtype} but went "
                   "out with shape {new_shape} and dtype {new_dtype}. new_state must have the same structure, "
                   "shapes and dtypes as state (mixing an int32 count with a float makes a float32 one).").format(
                call=call, i=i + 1, shape=old.shape, dtype=old.dtype, new_shape=new.shape, new_dtype=new.dtype))
    return out[:-1], out[-1]


def test_running_mean_under_jit(learner, rng):
    init, programs = _programs(learner)
    for __ in range(2):
        batches = _batches(rng, int(rng.integers(4, 8)))
        sizes = [len(b) for b in batches]
        state = init
        for i, (batch, want) in enumerate(zip(batches, _running_means(batches))):
            call = _("jax.jit(update) #{i} from init_state() (batch sizes {sizes})").format(i=i + 1, sizes=sizes)
            state, mean = _step(programs[str(len(batch))], state, batch, call)
            assert_close(mean, np.float32(want), what=_("the mean returned by {call}").format(call=call),
                         rtol=1e-5, atol=1e-6, dtype=np.float32)


def test_old_states_stay_valid_under_jit(learner, rng):
    init, programs = _programs(learner)
    first, second = _batches(rng, 2)
    s1, __ = _step(programs[str(len(first))], init, first, "jax.jit(update)(init_state(), batch)")
    __, m_a = _step(programs[str(len(second))], s1, second, _("jax.jit(update) on the state after one batch"))
    __, m_b = _step(programs[str(len(second))], s1, second, _("jax.jit(update) on the same state again"))
    __, m_start = _step(programs[str(len(second))], init, second, "jax.jit(update)(init_state(), batch)")
    assert_close(m_b, m_a, what=_("jax.jit(update) called twice on the same state and batch"))
    assert_close(m_a, np.float32(_running_means([first, second])[-1]), what=_("update(state_after_first_batch, "
                                                                              "second_batch)"), rtol=1e-5)
    assert_close(m_start, np.float32(second.astype(np.float64).mean()),
                 what=_("update(init_state(), batch) after other updates were made"), rtol=1e-5)


def test_update_leaves_its_state_alone(learner, rng):
    batches = _batches(rng, 4)
    got = learner.probe(probe_eager, batches)
    sizes = [len(b) for b in batches]
    for i, (before, after) in enumerate(zip(got["before"], got["after"])):
        same = len(before) == len(after) and all(
            np.shape(a) == np.shape(b) and np.array_equal(a, b) for a, b in zip(before, after))
        if not same:
            fail(_("update(state, batch) #{i}, called without jit (batch sizes {sizes}), changed the state it "
                   "was given: the caller's old state is no longer what it was. Build and return a new state "
                   "(e.g. a new dict) instead of assigning into the one passed in.").format(i=i + 1, sizes=sizes))
    for i, (mean, want) in enumerate(zip(got["means"], _running_means(batches))):
        assert_close(mean, np.float32(want),
                     what=_("the mean returned by update #{i} without jit (batch sizes {sizes})").format(
                         i=i + 1, sizes=sizes), rtol=1e-5, atol=1e-6)
    a, b = got["again"]
    if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-6):
        fail(_("update(state, batch) called twice with the same state and batch gave {a} then {b}: "
               "update must not change anything outside its return value (a global? an attribute?).").format(a=a, b=b))


def test_two_runs_from_init_state_agree(learner, rng):
    batches = _batches(rng, 3)
    first = learner.probe(probe_eager, batches)["means"]
    second = learner.probe(probe_eager, batches)["means"]
    for i, (a, b) in enumerate(zip(first, second)):
        if not np.allclose(np.asarray(a), np.asarray(b), rtol=1e-6):
            fail(
                _("Running the same {n} batches twice from init_state() gave different means at "
                  "update #{i} ({a} then {b}): the result depends on something other than the state "
                  "passed in (a global or an attribute?).").format(n=len(batches), i=i + 1, a=a, b=b)
            )

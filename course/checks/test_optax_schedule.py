"""Checks for optax_schedule: warm-up + cosine values, and a clip-then-Adam chain."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_tree_close, fail, side_by_side
from course.engine.words import _

TIMEOUT = 60
# The parameters' shapes come from a small fixed set, so that the programs compiled for
# them are reused from one check to the next; the values are drawn fresh.
PARAM_SHAPES = [{"kernel": (3, 5), "bias": (5,)}, {"kernel": (4, 2), "bias": (2,)}]


def probe_schedule(module, peak_lr, warmup_steps, total_steps, last):
    import jax
    import jax.numpy as jnp

    schedule = module.make_schedule(peak_lr, warmup_steps, total_steps)
    compiled = jax.jit(schedule)  # an optimizer calls it with a traced step count
    return {"jit": [compiled(jnp.int32(k)) for k in range(last + 1)],
            "int": [schedule(k) for k in (0, warmup_steps, total_steps)]}


def probe_updates(module, peak_lr, warmup_steps, total_steps, max_norm, params, grads_seq):
    import jax.numpy as jnp

    tx = module.make_tx(peak_lr, warmup_steps, total_steps, max_norm)
    params = {k: jnp.asarray(v) for k, v in params.items()}
    state = tx.init(params)
    out = []
    for grads in grads_seq:
        grads = {k: jnp.asarray(v) for k, v in grads.items()}
        updates, state = tx.update(grads, state, params)
        out.append(dict(updates))
    return out


def _settings(rng):
    warmup = int(rng.integers(2, 8))
    total = warmup + int(rng.integers(5, 20))
    peak = float(10 ** rng.uniform(-4, -1))
    return peak, warmup, total


def test_schedule_values(learner, reference, rng):
    peak, warmup, total = _settings(rng)
    last = total + 3
    got, want = side_by_side(learner, reference).probe(probe_schedule, peak, warmup, total, last)
    where = f"make_schedule(peak_lr={peak:.3g}, warmup_steps={warmup}, total_steps={total})"
    for k in range(last + 1):
        assert_close(got["jit"][k], want["jit"][k], what=_("{where} at step {k} (under jax.jit)").format(where=where, k=k),
                     rtol=1e-4, atol=1e-9)
    assert_tree_close(got["int"], want["int"],
                      what=_("{where} at Python-int steps 0, {warmup}, {total}").format(
                          where=where, warmup=warmup, total=total),
                      rtol=1e-4, atol=1e-9)


def test_chain_updates(learner, reference, rng):
    peak, warmup, total = _settings(rng)
    max_norm = float(rng.uniform(0.5, 2.0))
    shapes = PARAM_SHAPES[int(rng.integers(len(PARAM_SHAPES)))]
    params = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    # A leaf that never gets a gradient: Adam leaves it exactly alone, weight decay (AdamW) does not.
    params["frozen"] = (10 * rng.standard_normal(3)).astype(np.float32)
    # A leaf with gradients near Adam's eps (1e-8 in Optax): another eps shows in its updates.
    params["tiny"] = rng.standard_normal(4).astype(np.float32)
    grads_seq = []
    for step in range(total + 2):
        # Alternate huge and small gradients: clipping must act on some steps only.
        scale = 50.0 if step % 2 == 0 else 0.01
        grads = {k: (scale * rng.standard_normal(s)).astype(np.float32) for k, s in shapes.items()}
        grads["frozen"] = np.zeros(3, np.float32)
        grads["tiny"] = (1e-7 * rng.standard_normal(4)).astype(np.float32)
        grads_seq.append(grads)
    got, want = side_by_side(learner, reference).probe(probe_updates, peak, warmup, total, max_norm, params, grads_seq)
    where = _("make_tx(peak_lr={peak:.3g}, warmup_steps={warmup}, total_steps={total}, max_norm={max_norm:.3g}): "
              "tx.update on gradients alternating far above and below max_norm").format(
        peak=peak, warmup=warmup, total=total, max_norm=max_norm)
    if not isinstance(got, list) or len(got) != len(want):
        fail(_("{where}: the check could not read the updates (got {type}).").format(
            where=where, type=type(got).__name__))
    for step, (g, w) in enumerate(zip(got, want)):
        frozen = np.asarray(g.get("frozen")) if isinstance(g, dict) else None
        if frozen is not None and frozen.shape == (3,) and np.any(frozen != 0):
            fail(_("{where}: at step {step} a parameter whose gradient is always zero got the update {frozen}. "
                   "Adam leaves such a parameter alone; weight decay (AdamW) moves it. Chain "
                   "clip_by_global_norm with optax.adam(schedule).").format(where=where, step=step, frozen=frozen))
        assert_tree_close(g, w, what=_("{where}, the updates at step {step}").format(where=where, step=step),
                          rtol=1e-3, atol=1e-9)

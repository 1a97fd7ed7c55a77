"""Checks for nan_hunt: a norm with finite gradients, and a log checked inside jit.

The learner's process returns evidence: values and gradients of its functions on
inputs drawn here, and what checkify reported for them. Which inputs are invalid,
and what the gradients must be, is decided here.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail, side_by_side

TIMEOUT = 60
NORM_SHAPES = [(6, 4), (3, 5, 3)]
LOG_SHAPE = (8,)


def probe_norm(module, x):
    import jax
    import jax.numpy as jnp

    value = module.safe_norm(jnp.asarray(x))
    grad = jax.grad(lambda v: jnp.sum(module.safe_norm(v)))(jnp.asarray(x))
    return {"value": value, "grad": grad}


def probe_log(module, batches):
    import jax
    import jax.numpy as jnp
    from jax.experimental import checkify

    checked = jax.jit(checkify.checkify(module.checked_log))
    out = []
    for x in batches:
        err, y = checked(jnp.asarray(x))
        message = err.get()
        out.append({"error": None if message is None else str(message)[:500], "y": y})
    return out


def _norm_input(rng):
    shape = NORM_SHAPES[int(rng.integers(len(NORM_SHAPES)))]
    x = rng.standard_normal(shape).astype(np.float32)
    rows = x.reshape(-1, shape[-1])
    zero = rng.choice(rows.shape[0], size=max(1, rows.shape[0] // 3), replace=False)
    rows[zero] = 0.0  # rows of zeros: where the naive gradient is NaN
    return rows.reshape(shape), zero


def test_safe_norm_values_and_finite_gradients(learner, reference, rng):
    x, zero_rows = _norm_input(rng)
    got, want = side_by_side(learner, reference).probe(probe_norm, x)
    call = f"safe_norm(x {x.shape}, {len(zero_rows)} rows of zeros)"
    value, grad = got["value"], got["grad"]
    if not isinstance(value, np.ndarray) or value.shape != x.shape[:-1]:
        fail(f"{call} returned {getattr(value, 'shape', type(value).__name__)}, expected shape {x.shape[:-1]}: "
             "the norm along the last axis.")
    if value.dtype != np.float32:
        fail(f"{call} has dtype {value.dtype}, expected float32.")
    at_zero = value.reshape(-1)[zero_rows]
    if np.any(at_zero != 0.0):
        fail(f"{call}: the norm of a row of zeros is {float(np.max(np.abs(at_zero))):.3g}, not 0. An epsilon "
             "added under the square root changes the norm; keep it exact with the double where: "
             "jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0).")
    assert_close(value, want["value"], what=call, rtol=1e-5, atol=1e-5)
    if not isinstance(grad, np.ndarray) or grad.shape != x.shape:
        fail(f"the gradient of sum({call}) has shape {getattr(grad, 'shape', None)}, expected {x.shape}.")
    bad = ~np.isfinite(grad)
    if bad.any():
        fail(f"the gradient of sum({call}) has {int(bad.sum())} non-finite entries (NaN or inf), in the rows of "
             "zeros. The unused side of jnp.where is still differentiated: keep sqrt's input safe with a first "
             "where, then pick the result with a second one.")
    assert_close(grad, want["grad"], what=f"the gradient of sum({call})", rtol=1e-4, atol=1e-5)


def test_checked_log_reports_exactly_the_bad_inputs(learner, reference, rng):
    batches, bad = [], []
    for i in range(4):
        x = rng.uniform(0.1, 3.0, size=LOG_SHAPE).astype(np.float32)
        if i % 2 == 1:
            where = int(rng.integers(LOG_SHAPE[0]))
            x[where] = -float(rng.uniform(0.0, 2.0)) if i == 1 else 0.0  # negative, then exactly zero
        batches.append(x)
        bad.append(bool((x <= 0).any()))
    got, want = side_by_side(learner, reference).probe(probe_log, batches)
    if not isinstance(got, list) or len(got) != len(batches):
        fail("checked_log: the check could not read one result per batch.")
    for x, is_bad, mine, ref in zip(batches, bad, got, want):
        call = f"jax.jit(checkify.checkify(checked_log))(x) with min(x) = {float(x.min()):.4g}"
        error = mine.get("error") if isinstance(mine, dict) else None
        if is_bad:
            if error is None:
                fail(f"{call}: err.get() is None, but x has a non-positive element. Add "
                     "checkify.check(jnp.all(x > 0), ...) before the log.")
            if "non-positive input" not in error:
                fail(f"{call}: the error says {error!r}; it must contain the words 'non-positive input'.")
        else:
            if error is not None:
                fail(f"{call}: err.get() reported {error!r} for an input whose elements are all positive.")
            assert_close(mine.get("y"), ref["y"], what=call, rtol=1e-6, atol=1e-6)

"""Checks for clip_gradient: identity forward, gradient clipped to [-limit, limit] backward."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail, side_by_side
from course.engine.programs import ProgramError, run
from course.engine.words import _

TIMEOUT = 60


def probe_clip(module, x, w, a, limit):
    import jax
    import jax.numpy as jnp

    x, w = jnp.asarray(x), jnp.asarray(w)

    def weighted(v):
        return jnp.sum(w * module.clip_gradient(v, limit))

    def composed(v):
        return jnp.sum(w * module.clip_gradient(a * v, limit) ** 2)

    rows = jax.vmap(jax.grad(lambda r, wr: jnp.sum(wr * module.clip_gradient(r, limit))))
    return {
        "value": module.clip_gradient(x, limit),
        "grad": jax.grad(weighted)(x),
        "jit_grad": jax.jit(jax.grad(weighted))(x),
        "composed_grad": jax.grad(composed)(x),
        "vmap_grad": rows(x.reshape(x.shape[0], -1), w.reshape(w.shape[0], -1)),
    }


def _inputs(rng):
    shape = tuple(int(s) for s in rng.integers(2, 7, size=int(rng.integers(1, 3))))
    if np.prod(shape) < 4:  # room for the four entries _discriminating sets
        shape = (int(rng.integers(4, 7)),)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal(shape) * 3).astype(np.float32)  # many entries beyond the limit
    limit = float(rng.uniform(0.3, 1.5))
    # The scale a stays away from 1, where a * clip(g) and clip(a * g) would agree.
    a = float(rng.uniform(0.5, 0.8) if rng.random() < 0.5 else rng.uniform(1.25, 2.0))
    _discriminating(rng, x, w, limit)
    return x, w, a, limit


def _discriminating(rng, x, w, limit):
    """Make every draw tell clipping from its look-alikes, whatever the other entries are: a
    gradient beyond each end of [-limit, limit] and one within it on each side of 0, so that
    clipping from one side only (jnp.minimum(g, limit)) or to [0, limit] shows on every draw.

    Entry 0: |x| beyond the limit and |w| at least 3, so the gradient of sum(w * clip_gradient(x))
    is clipped there, and so is that of sum(w * clip_gradient(a * x) ** 2) (|2 w a x| >= 2.4 > 1.5).
    Entry 1: |w| a tenth of the limit and |x| at most 1, so no gradient through it is clipped.
    Entries 2 and 3: entries 0 and 1 with w's sign turned, and so both gradients' signs.
    """
    sign = rng.choice([-1.0, 1.0], size=4)
    x.flat[0] = sign[0] * (limit + rng.uniform(0.5, 1.5))
    w.flat[0] = sign[1] * rng.uniform(3.0, 6.0)
    x.flat[1] = sign[2] * rng.uniform(0.2, 1.0)
    w.flat[1] = sign[3] * 0.1 * limit
    x.flat[2] = sign[0] * (limit + rng.uniform(0.5, 1.5))
    w.flat[2] = -sign[1] * rng.uniform(3.0, 6.0)
    x.flat[3] = sign[2] * rng.uniform(0.2, 1.0)
    w.flat[3] = -sign[3] * 0.1 * limit


def _both(learner, reference, rng):
    x, w, a, limit = _inputs(rng)
    args = (x, w, a, limit)
    return x, limit, *side_by_side(learner, reference).probe(probe_clip, *args)


def test_forward_is_the_identity(learner, reference, rng):
    x, limit, got, want = _both(learner, reference, rng)
    assert_close(got["value"], want["value"], what=_("clip_gradient(x, {limit:.3f}) for x of shape {shape}").format(limit=limit, shape=x.shape),
                 rtol=0, atol=0)


def test_gradient_is_clipped(learner, reference, rng):
    x, limit, got, want = _both(learner, reference, rng)
    assert_close(got["grad"], want["grad"],
                 what=_("jax.grad(sum(w * clip_gradient(x, {limit:.3f}))) for x {shape} (should be clip(w, -limit, limit))")
                 .format(limit=limit, shape=x.shape))


def test_chain_rule_applies_around_it(learner, reference, rng):
    x, limit, got, want = _both(learner, reference, rng)
    assert_close(got["composed_grad"], want["composed_grad"],
                 what=_("jax.grad(sum(w * clip_gradient(a * x, {limit:.3f}) ** 2)) for x {shape}").format(
                     limit=limit, shape=x.shape), rtol=1e-5, atol=1e-6)


def test_works_under_jit_and_vmap(learner, reference, rng):
    x, limit, got, want = _both(learner, reference, rng)
    assert_close(got["jit_grad"], want["jit_grad"], what=_("jax.jit(jax.grad(...)) of clip_gradient, x {shape}").format(shape=x.shape))
    assert_close(got["vmap_grad"], want["vmap_grad"], what=_("jax.vmap(jax.grad(...)) of clip_gradient over the rows of x {shape}").format(shape=x.shape))


def probe_gradient_program(module, shape, limit):
    import jax
    import jax.numpy as jnp

    def weighted(v, w):
        return jnp.sum(w * module.clip_gradient(v, limit))

    spec = jax.ShapeDtypeStruct(tuple(shape), jnp.float32)
    return jax.jit(jax.grad(weighted), keep_unused=True).lower(spec, spec).as_text()


def test_gradient_program_run_here_on_fresh_inputs(learner, rng):
    # The program is lowered on shapes alone; the inputs are drawn after it came back and it runs
    # here, so the learner's process never sees them and cannot shape the answer.
    shape = [int(rng.choice([3, 5])), int(rng.choice([2, 4]))]
    limit = float(rng.uniform(0.3, 1.5))
    text = learner.probe(probe_gradient_program, shape, limit)
    x = rng.standard_normal(shape).astype(np.float32)
    w = (rng.standard_normal(shape) * 3).astype(np.float32)
    _discriminating(rng, x, w, limit)
    call = f"jax.grad(lambda v, w: sum(w * clip_gradient(v, {limit:.3f})))"
    try:
        (grad,) = run(text, x, w)
    except ProgramError as e:
        fail(_("{call}, lowered for x {shape}, could not be run by the check: {error}.").format(
            call=call, shape=tuple(shape), error=e))
    except ValueError as e:
        fail(_("{call}, lowered for x {shape}, returned more than the gradient: {error}.").format(
            call=call, shape=tuple(shape), error=e))
    assert_close(grad, np.clip(w, -limit, limit), what=_("{call} for x {shape}, run by the check "
                 "(should be clip(w, -limit, limit))").format(call=call, shape=tuple(shape)), rtol=1e-6, atol=1e-7)

"""Checks for straight_through: rounding forward, identity gradient backward."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail, side_by_side
from course.engine.programs import ProgramError, run
from course.engine.words import _

TIMEOUT = 60


def probe_ste(module, x, w):
    import jax
    import jax.numpy as jnp

    x, w = jnp.asarray(x), jnp.asarray(w)

    def weighted(v):
        return jnp.sum(w * module.round_ste(v))

    def composed(v):
        return jnp.sum(jnp.sin(module.round_ste(2.0 * v)) * w)

    rows = jax.vmap(jax.grad(lambda r, wr: jnp.sum(wr * module.round_ste(r))))
    return {
        "value": module.round_ste(x),
        "grad": jax.grad(weighted)(x),
        "jit_grad": jax.jit(jax.grad(weighted))(x),
        "composed_grad": jax.grad(composed)(x),
        "vmap_grad": rows(x.reshape(x.shape[0], -1), w.reshape(w.shape[0], -1)),
    }


def _inputs(rng):
    shape = tuple(int(s) for s in rng.integers(2, 7, size=int(rng.integers(1, 3))))
    if np.prod(shape) < 4:  # room for the four entries set below
        shape = (int(rng.integers(4, 7)),)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    # Keep clear of .5 ties, where "round half to even" and other rounding rules differ.
    x = np.where(np.abs(x - np.round(x)) > 0.45, x + 0.1, x).astype(np.float32)
    # Four entries on both sides of each other rounding's threshold: a fraction over .5 and one under
    # it, each on a positive and a negative number. Rounding down, up or toward zero (jnp.floor,
    # jnp.ceil, jnp.trunc, astype(int)) moves at least one of them; random entries miss on some draws.
    if x.size >= 4:
        ints = rng.integers(0, 4, size=4)
        fracs = np.concatenate([rng.uniform(0.55, 0.95, 2), rng.uniform(0.05, 0.45, 2)])
        x.flat[:4] = (np.array([1, -1, 1, -1]) * (ints + fracs)).astype(np.float32)
    w = rng.standard_normal(shape).astype(np.float32)
    return x, w


def _both(learner, reference, rng):
    x, w = _inputs(rng)
    return x, *side_by_side(learner, reference).probe(probe_ste, x, w)


def test_forward_is_rounding(learner, reference, rng):
    x, got, want = _both(learner, reference, rng)
    assert_close(got["value"], want["value"], what=_("round_ste(x) for x of shape {shape}").format(
        shape=x.shape), rtol=0, atol=1e-5)


def test_gradient_passes_straight_through(learner, reference, rng):
    x, got, want = _both(learner, reference, rng)
    assert_close(got["grad"], want["grad"], what=_("jax.grad(sum(w * round_ste(x))) for x of shape {shape} (should "
                                                   "be w)").format(shape=x.shape))
    assert_close(got["composed_grad"], want["composed_grad"],
                 what=_("jax.grad(sum(sin(round_ste(2 * x)) * w)) for x of shape {shape}").format(
                     shape=x.shape), rtol=1e-4, atol=1e-5)


def test_works_under_jit_and_vmap(learner, reference, rng):
    x, got, want = _both(learner, reference, rng)
    assert_close(got["jit_grad"], want["jit_grad"], what=_("jax.jit(jax.grad(...)) of round_ste, x {shape}").format(
        shape=x.shape))
    assert_close(got["vmap_grad"], want["vmap_grad"], what=_("jax.vmap(jax.grad(...)) of round_ste over the rows "
                                                             "of x {shape}").format(shape=x.shape))


def probe_programs(module, shape):
    import jax
    import jax.numpy as jnp

    def weighted(v, w):
        return jnp.sum(w * module.round_ste(v))

    spec = jax.ShapeDtypeStruct(tuple(shape), jnp.float32)
    value = jax.jit(module.round_ste).lower(spec).as_text()
    grad = jax.jit(jax.grad(weighted), keep_unused=True).lower(spec, spec).as_text()
    return [value, grad]


def test_programs_run_here_on_fresh_inputs(learner, rng):
    # Lowered on shapes alone; the inputs are drawn after the programs came back and they run here.
    shape = [int(rng.choice([3, 5])), int(rng.choice([2, 4]))]
    texts = learner.probe(probe_programs, shape)
    x, w = _inputs(np.random.default_rng(rng.integers(2**31)))
    x = np.resize(x, shape).astype(np.float32)
    w = np.resize(w, shape).astype(np.float32)
    # Some exact halves here, where the statement asks for jnp.round's rule: to the even neighbour.
    # Halves of even numbers (-3.5, 0.5, 2.5...), where rounding half up or away from zero differs.
    halves = rng.random(shape) < 0.4
    x = np.where(halves, 2 * rng.integers(-2, 3, size=shape) + 0.5 * rng.choice([-1, 1], size=shape), x)
    x.flat[0] = 2 * rng.integers(0, 3) + 0.5  # 0.5, 2.5 or 4.5: down to the even number
    x = x.astype(np.float32)
    if not isinstance(texts, list) or len(texts) != 2:
        fail(_("the check could not lower round_ste for x {shape} (got {type}).").format(
            shape=tuple(shape), type=type(texts).__name__))
    try:
        (value,) = run(texts[0], x)
        (grad,) = run(texts[1], x, w)
    except (ProgramError, ValueError) as e:
        fail(_("round_ste, lowered for x {shape}, could not be run by the check: {e}.").format(
            shape=tuple(shape), e=e))
    assert_close(value, np.round(x), what=_("round_ste(x) for x {shape}, run by the check (exact halves such "
                                            "as 2.5 go to the even neighbour, like jnp.round)").format(
                                                shape=tuple(shape)), rtol=0, atol=1e-5)
    assert_close(grad, w, what=_("jax.grad(lambda v, w: sum(w * round_ste(v))) for x {shape}, run by the "
                                 "check (should be w)").format(shape=tuple(shape)), rtol=1e-6, atol=1e-7)

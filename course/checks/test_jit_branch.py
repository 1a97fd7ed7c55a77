"""Checks for jit_branch: clip_by_norm and huber_loss under jax.jit with every
argument traced, on both sides of each branch, and clip_by_norm's gradient at zero.

Evidence: each function lowered under jax.jit for shapes the check chose, with
`max_norm` and `delta` traced too. The check runs the program here on values
the learner's process never sees and compares with NumPy and PyTorch here.

The gradient is evidence of the same kind: the child lowers
`jax.grad(lambda g, max_norm, c: sum(clip_by_norm(g, max_norm) * c))` (a
vector-Jacobian product whose cotangent `c` is an argument), and this process
runs it (`course.engine.programs`, through `run_lowered`) at g = 0 and at points
on both sides of the threshold, with cotangents drawn here, and compares it with
the Jacobian NumPy computes here. A gradient number the child reported would be
whatever its patched `jax.grad` said; a program that gives the right vector-Jacobian
products on fresh inputs costs as much as writing a clip whose gradient is right.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from course.engine.checking import assert_close, fail
from course.engine.evidence import run_lowered
from course.engine.words import N_, _

# Every test runs one 1-D and one 2-D shape: on a vector, a norm or a mean along the
# last axis is the same as over all elements, and that mistake only shows on a matrix.
SHAPES = [[(7,), (12,)], [(3, 5), (4, 2)]]


def probe_lower(module, name, shapes):
    import jax
    import jax.numpy as jnp

    specs = [jax.ShapeDtypeStruct(tuple(s), jnp.float32) for s in shapes]
    return jax.jit(getattr(module, name), keep_unused=True).lower(*specs).as_text()


def probe_lower_grad(module, name, shapes):
    import jax
    import jax.numpy as jnp

    fn = getattr(module, name)

    def weighted_sum(g, max_norm, cotangent):
        return jnp.sum(fn(g, max_norm) * cotangent)

    specs = [jax.ShapeDtypeStruct(tuple(s), jnp.float32) for s in shapes]
    return jax.jit(jax.grad(weighted_sum), keep_unused=True).lower(*specs).as_text()


def _shapes(rng):
    return [group[int(rng.integers(len(group)))] for group in SHAPES]


def _run(program, args, call):
    out = run_lowered(program, args, what=call)
    if len(out) != 1:
        fail(_("{call} returns {n} arrays; expected one.").format(call=call, n=len(out)))
    return out[0]


def _clip(g, max_norm):
    norm = np.linalg.norm(g.astype(np.float64))
    return (g * (max_norm / norm) if norm > max_norm else g).astype(np.float32)


def test_clip_by_norm_on_both_sides_of_the_threshold(learner, rng):
    for shape in _shapes(rng):
        _clip_both_sides(learner, rng, shape)


def _clip_both_sides(learner, rng, shape):
    program = learner.probe(probe_lower, "clip_by_norm", [list(shape), []])
    for draw in range(2):
        g = rng.standard_normal(shape).astype(np.float32)
        if draw == 1:
            # A norm under 1 (0.2 to 0.6) and, above the threshold, a max_norm between the norm's
            # square and the norm: a test of sum(g * g) > max_norm (the square of max_norm forgotten)
            # leaves this g unclipped. The first draw's norms, over 1, show the other side.
            g = (g * (rng.uniform(0.2, 0.6) / np.linalg.norm(g))).astype(np.float32)
        norm = float(np.linalg.norm(g))
        above = norm * float(rng.uniform(0.65, 0.9) if draw == 1 else rng.uniform(0.2, 0.8))
        for max_norm, above in ((above, True), (norm * float(rng.uniform(1.2, 3.0)), False)):
            max_norm = np.float32(max_norm)
            if above:
                call = _("jax.jit(clip_by_norm)(g, {max_norm:.4g}) with g of shape {shape} and norm {norm:.4g} "
                         "(above max_norm)").format(max_norm=max_norm, shape=shape, norm=norm)
            else:
                call = _("jax.jit(clip_by_norm)(g, {max_norm:.4g}) with g of shape {shape} and norm {norm:.4g} "
                         "(below max_norm)").format(max_norm=max_norm, shape=shape, norm=norm)
            got = _run(program, [g, max_norm], call)
            assert_close(got, _clip(g, max_norm), what=call, dtype=np.float32, rtol=1e-5, atol=1e-6)


def test_clip_by_norm_leaves_zero_gradients_alone(learner, rng):
    shape = _shapes(rng)[1]
    program = learner.probe(probe_lower, "clip_by_norm", [list(shape), []])
    max_norm = np.float32(rng.uniform(0.5, 2.0))
    call = _("jax.jit(clip_by_norm)(zeros of shape {shape}, {max_norm:.3g})").format(shape=shape, max_norm=max_norm)
    got = _run(program, [np.zeros(shape, np.float32), max_norm], call)
    if not np.all(np.isfinite(got)):
        fail(_("{call} returned nan or inf: the norm of zeros is 0, and max_norm / 0 is not a number. "
               "Zeros are below any max_norm, so they must come back unchanged.").format(call=call))
    assert_close(got, np.zeros(shape, np.float32), what=call, dtype=np.float32)


def _clip_vjp(g, max_norm, c):
    """c^T J of clip_by_norm at g, in float64: c below the threshold (the identity),
    max_norm/n * (c - g (g.c)/n^2) above it (the derivative of g * max_norm/|g|)."""
    g, c = g.astype(np.float64), c.astype(np.float64)
    norm = np.linalg.norm(g)
    if norm <= max_norm:
        return c
    return max_norm / norm * (c - g * np.vdot(g, c) / norm**2)


NAN_GRADIENT = N_(
    "the gradient of clip_by_norm at g = 0 is NaN. The norm's derivative at zero is 0/0, and "
    "jnp.where multiplies the unused side's NaN gradient by zero, which leaves it NaN; clamping the "
    "norm afterwards (jnp.maximum(norm, 1e-12)) does not help: the NaN comes from inside the norm, where "
    "the square root meets 0 even on the branch that is not taken."
)


def test_clip_by_norm_gradient_is_finite_at_zero(learner, rng):
    shape = _shapes(rng)[1]
    program = learner.probe(probe_lower_grad, "clip_by_norm", [list(shape), [], list(shape)])
    zeros = np.zeros(shape, np.float32)
    # A bound below 1 and one above: a scale of min(1, max_norm / 1) taken at zero is right only above.
    for max_norm in (np.float32(rng.uniform(0.3, 0.9)), np.float32(rng.uniform(1.1, 2.0))):
        cotangent = rng.standard_normal(shape).astype(np.float32)
        call = _("jax.grad(lambda g: jnp.sum(clip_by_norm(g, {max_norm:.3g}) * c))(zeros of shape {shape}), "
                 "c random").format(max_norm=max_norm, shape=shape)
        got = _run(program, [zeros, max_norm, cotangent], call)
        if not np.all(np.isfinite(got)):
            fail(_("{call} has {n} NaN or inf entries: {advice}").format(
                call=call, n=int(np.sum(~np.isfinite(got))), advice=_(NAN_GRADIENT)))
        assert_close(got, cotangent,
                     what=_("{call} (clip_by_norm is the identity near zero, so its gradient is c)").format(call=call),
                     dtype=np.float32, rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(shape).astype(np.float32)
    norm = float(np.linalg.norm(g))
    for bound, above in ((norm * float(rng.uniform(0.2, 0.8)), True), (norm * float(rng.uniform(1.2, 3.0)), False)):
        bound = np.float32(bound)
        c = rng.standard_normal(shape).astype(np.float32)
        if above:
            call = _("jax.grad(lambda g: jnp.sum(clip_by_norm(g, {bound:.4g}) * c))(g) with g of shape {shape} "
                     "and norm {norm:.4g} (above max_norm)").format(bound=bound, shape=shape, norm=norm)
        else:
            call = _("jax.grad(lambda g: jnp.sum(clip_by_norm(g, {bound:.4g}) * c))(g) with g of shape {shape} "
                     "and norm {norm:.4g} (below max_norm)").format(bound=bound, shape=shape, norm=norm)
        got = _run(program, [g, bound, c], call)
        assert_close(got, _clip_vjp(g, float(bound), c).astype(np.float32), what=call, dtype=np.float32,
                     rtol=1e-4, atol=1e-5)


def test_huber_loss_matches_torch(learner, rng):
    for shape in _shapes(rng):
        _huber(learner, rng, shape)


def _huber(learner, rng, shape):
    program = learner.probe(probe_lower, "huber_loss", [list(shape), list(shape), []])
    for _draw in range(2):
        pred = (rng.standard_normal(shape) * 2).astype(np.float32)
        target = (rng.standard_normal(shape) * 2).astype(np.float32)
        # delta away from 1, so that a threshold of 1 (torch's default delta) or a test of r**2 <= delta
        # (the square of delta forgotten) puts a residual between delta and sqrt(delta) on the wrong side.
        delta = np.float32(rng.uniform(0.3, 0.75) if rng.random() < 0.5 else rng.uniform(1.35, 2.0))
        # Residuals on both sides of delta in every draw: one inside, one beyond, one between delta and
        # sqrt(delta) (beyond delta when delta < 1, inside it otherwise), the rest at random.
        target.flat[0] = pred.flat[0] + np.float32(rng.uniform(-0.9, 0.9) * delta)
        target.flat[-1] = pred.flat[-1] + np.float32(rng.choice([-1.0, 1.0]) * rng.uniform(1.5, 3.0) * delta)
        between = delta + rng.uniform(0.3, 0.7) * (np.sqrt(delta) - delta)
        target.flat[1] = pred.flat[1] + np.float32(rng.choice([-1.0, 1.0]) * between)
        call = _("jax.jit(huber_loss)(pred, target, {delta:.3g}) for shape {shape}").format(delta=delta, shape=shape)
        got = _run(program, [pred, target, delta], call)
        want = F.huber_loss(torch.from_numpy(pred), torch.from_numpy(target), delta=float(delta)).numpy()
        assert_close(got, want, what=_("{call} (against F.huber_loss)").format(call=call), rtol=1e-5, atol=1e-6, dtype=np.float32)

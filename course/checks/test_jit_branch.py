"""Checks for jit_branch: clip_by_norm and huber_loss under jax.jit with every
argument traced, on both sides of each branch.

Evidence: each function lowered under jax.jit for shapes the check chose, with
`max_norm` and `delta` traced too. The check runs the program here on values
the learner's process never sees and compares with NumPy and PyTorch here.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from course.engine.checking import assert_close, fail
from course.engine.evidence import run_lowered

# Every test runs one 1-D and one 2-D shape: on a vector, a norm or a mean along the
# last axis is the same as over all elements, and that mistake only shows on a matrix.
SHAPES = [[(7,), (12,)], [(3, 5), (4, 2)]]


def probe_lower(module, name, shapes):
    import jax
    import jax.numpy as jnp

    specs = [jax.ShapeDtypeStruct(tuple(s), jnp.float32) for s in shapes]
    return jax.jit(getattr(module, name), keep_unused=True).lower(*specs).as_text()


def _shapes(rng):
    return [group[int(rng.integers(len(group)))] for group in SHAPES]


def _run(program, args, call):
    out = run_lowered(program, args, what=call)
    if len(out) != 1:
        fail(f"{call} returns {len(out)} arrays; expected one.")
    return out[0]


def _clip(g, max_norm):
    norm = np.linalg.norm(g.astype(np.float64))
    return (g * (max_norm / norm) if norm > max_norm else g).astype(np.float32)


def test_clip_by_norm_on_both_sides_of_the_threshold(learner, rng):
    for shape in _shapes(rng):
        _clip_both_sides(learner, rng, shape)


def _clip_both_sides(learner, rng, shape):
    program = learner.probe(probe_lower, "clip_by_norm", [list(shape), []])
    for _ in range(2):
        g = rng.standard_normal(shape).astype(np.float32)
        norm = float(np.linalg.norm(g))
        for max_norm, side in ((norm * float(rng.uniform(0.2, 0.8)), "above"),
                               (norm * float(rng.uniform(1.2, 3.0)), "below")):
            max_norm = np.float32(max_norm)
            call = (f"jax.jit(clip_by_norm)(g, {max_norm:.4g}) with g of shape {shape} and norm {norm:.4g} "
                    f"({side} max_norm)")
            got = _run(program, [g, max_norm], call)
            assert_close(got, _clip(g, max_norm), what=call, dtype=np.float32, rtol=1e-5, atol=1e-6)


def test_clip_by_norm_leaves_zero_gradients_alone(learner, rng):
    shape = _shapes(rng)[1]
    program = learner.probe(probe_lower, "clip_by_norm", [list(shape), []])
    max_norm = np.float32(rng.uniform(0.5, 2.0))
    call = f"jax.jit(clip_by_norm)(zeros of shape {shape}, {max_norm:.3g})"
    got = _run(program, [np.zeros(shape, np.float32), max_norm], call)
    if not np.all(np.isfinite(got)):
        fail(f"{call} returned nan or inf: the norm of zeros is 0, and max_norm / 0 is not a number. "
             "Only rescale when the norm is above max_norm (jnp.where, or divide by jnp.maximum(norm, max_norm)).")
    assert_close(got, np.zeros(shape, np.float32), what=call, dtype=np.float32)


def test_huber_loss_matches_torch(learner, rng):
    for shape in _shapes(rng):
        _huber(learner, rng, shape)


def _huber(learner, rng, shape):
    program = learner.probe(probe_lower, "huber_loss", [list(shape), list(shape), []])
    for _ in range(2):
        pred = (rng.standard_normal(shape) * 2).astype(np.float32)
        target = (rng.standard_normal(shape) * 2).astype(np.float32)
        delta = np.float32(rng.uniform(0.3, 2.0))  # residuals fall on both sides of delta
        call = f"jax.jit(huber_loss)(pred, target, {delta:.3g}) for shape {shape}"
        got = _run(program, [pred, target, delta], call)
        want = F.huber_loss(torch.from_numpy(pred), torch.from_numpy(target), delta=float(delta)).numpy()
        assert_close(got, want, what=call + " (against F.huber_loss)", rtol=1e-5, atol=1e-6, dtype=np.float32)

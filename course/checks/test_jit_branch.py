"""Checks for jit_branch: clip_by_norm and huber_loss under jax.jit with every
argument traced, on both sides of each branch."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from course.engine.checking import assert_close


def probe_clip(module, g, max_norm):
    import jax

    return jax.jit(module.clip_by_norm)(jax.numpy.asarray(g), max_norm)


def probe_huber(module, pred, target, delta):
    import jax

    return jax.jit(module.huber_loss)(jax.numpy.asarray(pred), jax.numpy.asarray(target), delta)


def _shape(rng):
    return tuple(int(d) for d in rng.integers(2, 6, size=int(rng.integers(1, 3))))


def test_clip_by_norm_on_both_sides_of_the_threshold(learner, reference, rng):
    g = rng.standard_normal(_shape(rng)).astype(np.float32)
    norm = float(np.linalg.norm(g))
    for max_norm, side in ((norm * float(rng.uniform(0.2, 0.8)), "above"),
                           (norm * float(rng.uniform(1.2, 3.0)), "below")):
        what = f"jax.jit(clip_by_norm)(g, {max_norm:.4g}) with g of shape {g.shape} and norm {norm:.4g} ({side} max_norm)"
        assert_close(learner.probe(probe_clip, g, max_norm), reference.probe(probe_clip, g, max_norm), what=what)


def test_clip_by_norm_leaves_zero_gradients_alone(learner, reference, rng):
    g = np.zeros(_shape(rng), np.float32)
    max_norm = float(rng.uniform(0.5, 2.0))
    assert_close(learner.probe(probe_clip, g, max_norm), reference.probe(probe_clip, g, max_norm),
                 what=f"jax.jit(clip_by_norm)(zeros of shape {g.shape}, {max_norm:.3g})")


def test_huber_loss_matches_torch(learner, reference, rng):
    for _ in range(3):
        shape = _shape(rng)
        pred = (rng.standard_normal(shape) * 2).astype(np.float32)
        target = (rng.standard_normal(shape) * 2).astype(np.float32)
        delta = float(rng.uniform(0.3, 2.0))  # residuals fall on both sides of delta
        what = f"jax.jit(huber_loss)(pred, target, {delta:.3g}) for shape {shape}"
        got = learner.probe(probe_huber, pred, target, delta)
        assert_close(got, reference.probe(probe_huber, pred, target, delta), what=what)
        want = F.huber_loss(torch.from_numpy(pred), torch.from_numpy(target), delta=delta).numpy()
        assert_close(np.asarray(got), want, what=what + " (against F.huber_loss)", rtol=1e-5)

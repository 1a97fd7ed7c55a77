"""Near miss: clip_by_norm compares the sum of squares with max_norm, not with max_norm squared, so a norm under 1 with max_norm between its square and itself is left unclipped."""

import jax.numpy as jnp

MESSAGE = r"clip_by_norm.*(above|below) max_norm"


def clip_by_norm(g, max_norm):
    sq = jnp.sum(g * g)
    big = sq > max_norm
    norm = jnp.sqrt(jnp.where(big, sq, 1.0))
    return jnp.where(big, g * (max_norm / norm), g)


def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta)))

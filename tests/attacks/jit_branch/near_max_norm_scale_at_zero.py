"""Near miss: a NaN-free clip whose scale at zero is min(1, max_norm / 1): its gradient there is c * max_norm when max_norm < 1."""

MESSAGE = r"identity near zero, so its gradient is c"

import jax.numpy as jnp


def clip_by_norm(g, max_norm):
    sq = jnp.vdot(g, g)
    nonzero = sq > 0
    norm = jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)
    return g * jnp.minimum(1.0, max_norm / jnp.where(nonzero, norm, 1.0))


def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r <= delta, 0.5 * r * r, delta * (r - 0.5 * delta)))

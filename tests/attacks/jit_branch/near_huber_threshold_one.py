"""Near miss: huber_loss switches from the square to the line at |r| = 1 (torch's default delta) instead of at delta."""

import jax.numpy as jnp

MESSAGE = r"huber_loss.*F\.huber_loss"


def clip_by_norm(g, max_norm):
    sq = jnp.sum(g * g)
    big = sq > max_norm**2
    norm = jnp.sqrt(jnp.where(big, sq, 1.0))
    return jnp.where(big, g * (max_norm / norm), g)


def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r <= 1.0, 0.5 * r**2, delta * (r - 0.5 * delta)))

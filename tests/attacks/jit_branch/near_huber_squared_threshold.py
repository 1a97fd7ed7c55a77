"""Near miss: huber_loss compares the squared residual with delta, not with delta squared, so residuals between delta and sqrt(delta) take the wrong branch."""

import jax.numpy as jnp

MESSAGE = r"huber_loss.*F\.huber_loss"


def clip_by_norm(g, max_norm):
    sq = jnp.sum(g * g)
    big = sq > max_norm**2
    norm = jnp.sqrt(jnp.where(big, sq, 1.0))
    return jnp.where(big, g * (max_norm / norm), g)


def huber_loss(pred, target, delta):
    r2 = jnp.square(pred - target)
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r2 <= delta, 0.5 * r2, delta * (r - 0.5 * delta)))

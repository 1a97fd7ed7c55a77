"""Near miss: clip_by_norm with one plain jnp.where: right values everywhere, but a NaN gradient at g = 0."""

import jax.numpy as jnp

MESSAGE = r"gradient of clip_by_norm at g = 0 is NaN.*inside the norm"


def clip_by_norm(g, max_norm):
    norm = jnp.sqrt(jnp.sum(jnp.square(g)))
    return jnp.where(norm > max_norm, g * (max_norm / norm), g)


def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r <= delta, 0.5 * jnp.square(r), delta * (r - 0.5 * delta)))

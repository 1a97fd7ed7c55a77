"""Near miss: the norm clamped with jnp.maximum(norm, 1e-12) before dividing: finite values, NaN gradient at g = 0."""

import jax.numpy as jnp

MESSAGE = r"gradient of clip_by_norm at g = 0 is NaN.*jnp\.maximum"


def clip_by_norm(g, max_norm):
    norm = jnp.linalg.norm(g)
    scale = max_norm / jnp.maximum(norm, 1e-12)
    return jnp.where(norm > max_norm, g * scale, g)


def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta)))

"""Near miss: clip_by_norm rescales g / norm * min(norm, max_norm), which is nan for a zero gradient."""

import jax.numpy as jnp

MESSAGE = r"nan"


def clip_by_norm(g, max_norm):
    norm = jnp.linalg.norm(g)
    return g / norm * jnp.minimum(norm, max_norm)


def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta)))

"""Near miss: clip_by_norm keeps PyTorch's Python `if` on the norm, which cannot run under jax.jit."""

import jax.numpy as jnp

MESSAGE = r"clip_by_norm"


def clip_by_norm(g, max_norm):
    norm = jnp.linalg.norm(g)
    if norm > max_norm:
        g = g * (max_norm / norm)
    return g


def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta)))

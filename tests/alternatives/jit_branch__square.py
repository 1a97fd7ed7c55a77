"""jit_branch with jnp.square (lowered to chlo.square) and jnp.where for both branches."""

import jax.numpy as jnp


def clip_by_norm(g, max_norm):
    norm = jnp.sqrt(jnp.sum(jnp.square(g)))
    return jnp.where(norm > max_norm, g * (max_norm / norm), g)


def huber_loss(pred, target, delta):
    r = jnp.abs(pred - target)
    return jnp.mean(jnp.where(r <= delta, 0.5 * jnp.square(r), delta * (r - 0.5 * delta)))

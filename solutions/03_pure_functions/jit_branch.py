"""Data-dependent branches written so that jax.jit can compile them."""

import jax
import jax.numpy as jnp


def clip_by_norm(g: jax.Array, max_norm: float) -> jax.Array:
    norm = jnp.linalg.norm(g)
    # The guarded denominator keeps the unselected side finite for g == 0.
    scale = max_norm / jnp.maximum(norm, 1e-12)
    return jnp.where(norm > max_norm, g * scale, g)


def huber_loss(pred: jax.Array, target: jax.Array, delta: float) -> jax.Array:
    r = jnp.abs(pred - target)
    per_element = jnp.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta))
    return jnp.mean(per_element)

"""Data-dependent branches written so that jax.jit can compile them."""

import jax
import jax.numpy as jnp


def clip_by_norm(g: jax.Array, max_norm: float) -> jax.Array:
    # The double where (lesson 3): sqrt's derivative at 0 is infinite, and a where
    # only multiplies the unused side's gradient by zero (0 * inf is nan). So the
    # first where keeps sqrt's input away from 0 on the unused side, the second picks.
    sq = jnp.sum(g * g)
    big = sq > max_norm**2
    norm = jnp.sqrt(jnp.where(big, sq, 1.0))
    return jnp.where(big, g * (max_norm / norm), g)


def huber_loss(pred: jax.Array, target: jax.Array, delta: float) -> jax.Array:
    r = jnp.abs(pred - target)
    per_element = jnp.where(r <= delta, 0.5 * r**2, delta * (r - 0.5 * delta))
    return jnp.mean(per_element)

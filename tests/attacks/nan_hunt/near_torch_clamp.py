"""Near miss: PyTorch's F.normalize, the norm clamped at 1e-12, which changes rows whose norm is smaller."""

MESSAGE = r"clamp|epsilon"

import jax
import jax.numpy as jnp
from jax.experimental import checkify




def safe_normalize(x):
    sq = jnp.sum(x * x, axis=-1, keepdims=True)
    nonzero = sq > 0
    norm = jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)
    return x / jnp.maximum(norm, 1e-12)


def checked_entropy(p):
    checkify.check(jnp.all(p >= 0), "checked_entropy: negative probability {}", jnp.min(p))
    positive = p > 0
    return -jnp.sum(jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0), axis=-1)

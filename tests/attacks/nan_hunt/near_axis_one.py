"""Near miss: normalises and sums along axis 1, which is the last axis only for 2-D arrays."""

MESSAGE = r"last axis|expected float32"

import jax
import jax.numpy as jnp
from jax.experimental import checkify


def safe_normalize(x):
    sq = jnp.sum(x * x, axis=1, keepdims=True)
    nonzero = sq > 0
    return jnp.where(nonzero, x / jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)


def checked_entropy(p):
    checkify.check(jnp.all(p >= 0), "checked_entropy: negative probability {}", jnp.min(p))
    positive = p > 0
    return -jnp.sum(jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0), axis=1)

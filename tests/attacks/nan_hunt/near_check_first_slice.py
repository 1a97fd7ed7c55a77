"""Near miss: checked_entropy checks only p[0] for negative entries, as if p held a single distribution."""

MESSAGE = r"no check fired"

import jax
import jax.numpy as jnp
from jax.experimental import checkify


def safe_normalize(x: jax.Array) -> jax.Array:
    sq = jnp.sum(x * x, axis=-1, keepdims=True)
    nonzero = sq > 0
    return jnp.where(nonzero, x / jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)


def checked_entropy(p: jax.Array) -> jax.Array:
    # p[0]: the first distribution only, as if p held one.
    checkify.check(jnp.all(p[0] >= 0), "checked_entropy: negative probability {}", jnp.min(p))
    positive = p > 0
    return -jnp.sum(jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0), axis=-1)

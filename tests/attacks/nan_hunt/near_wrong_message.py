"""Near miss: the check is right, but its message does not say what the statement asks."""

MESSAGE = r"negative probability"

import jax
import jax.numpy as jnp
from jax.experimental import checkify




def safe_normalize(x):
    sq = jnp.sum(x * x, axis=-1, keepdims=True)
    nonzero = sq > 0
    return jnp.where(nonzero, x / jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)


def checked_entropy(p):
    checkify.check(jnp.all(p >= 0), "checked_entropy: bad input {}", jnp.min(p))
    positive = p > 0
    return -jnp.sum(jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0), axis=-1)

"""Near miss: -sum(p * log(p)) as written, NaN where p == 0."""

MESSAGE = r"0 \* log\(0\) is NaN"

import jax
import jax.numpy as jnp
from jax.experimental import checkify




def safe_normalize(x):
    sq = jnp.sum(x * x, axis=-1, keepdims=True)
    nonzero = sq > 0
    return jnp.where(nonzero, x / jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)


def checked_entropy(p):
    checkify.check(jnp.all(p >= 0), "checked_entropy: negative probability {}", jnp.min(p))
    return -jnp.sum(p * jnp.log(p), axis=-1)

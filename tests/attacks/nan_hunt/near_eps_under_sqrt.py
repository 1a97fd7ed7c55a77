"""Near miss: an epsilon under the square root instead of the double where, so small rows are not divided exactly."""

MESSAGE = r"clamp|epsilon"

import jax
import jax.numpy as jnp
from jax.experimental import checkify




def safe_normalize(x):
    return x / jnp.sqrt(jnp.sum(x * x, axis=-1, keepdims=True) + 1e-12)


def checked_entropy(p):
    checkify.check(jnp.all(p >= 0), "checked_entropy: negative probability {}", jnp.min(p))
    positive = p > 0
    return -jnp.sum(jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0), axis=-1)

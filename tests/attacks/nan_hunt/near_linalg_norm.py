"""Near miss: x / jnp.linalg.norm(x), NaN on a row of zeros (value and gradient)."""

MESSAGE = r"row of zeros"

import jax
import jax.numpy as jnp
from jax.experimental import checkify




def safe_normalize(x):
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


def checked_entropy(p):
    checkify.check(jnp.all(p >= 0), "checked_entropy: negative probability {}", jnp.min(p))
    positive = p > 0
    return -jnp.sum(jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0), axis=-1)

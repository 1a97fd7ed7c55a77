"""Near miss: the guard applied element by element, so a row that mixes zeros and nonzeros gets the wrong norm."""

MESSAGE = r"mixing zeros|element by element"

import jax
import jax.numpy as jnp
from jax.experimental import checkify




def safe_normalize(x):
    nonzero = x != 0
    safe = jnp.where(nonzero, x, 1.0)
    any_nonzero = jnp.any(nonzero, axis=-1, keepdims=True)
    return jnp.where(any_nonzero, x / jnp.sqrt(jnp.sum(safe * safe, axis=-1, keepdims=True)), 0.0)


def checked_entropy(p):
    checkify.check(jnp.all(p >= 0), "checked_entropy: negative probability {}", jnp.min(p))
    positive = p > 0
    return -jnp.sum(jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0), axis=-1)

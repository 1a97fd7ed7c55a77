"""Near miss: a small epsilon under the square root instead of the double where, so a row of zeros has a norm of 1e-6, not 0."""
import jax.numpy as jnp
from jax.experimental import checkify

MESSAGE = r"row of zeros|not 0"


def safe_norm(x):
    return jnp.sqrt(jnp.sum(x * x, axis=-1) + 1e-12)


def checked_log(x):
    checkify.check(jnp.all(x > 0), "checked_log: non-positive input {}", jnp.min(x))
    return jnp.log(x)

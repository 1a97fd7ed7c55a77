"""Near miss: one where only, so sqrt(0) is still differentiated."""

MESSAGE = r"non-finite entries.*where"



import jax
import jax.numpy as jnp
from jax.experimental import checkify


def safe_norm(x):
    sq = jnp.sum(x * x, axis=-1)
    return jnp.where(sq > 0, jnp.sqrt(sq), 0.0)


def checked_log(x):
    checkify.check(jnp.all(x > 0), "checked_log: non-positive input {}", jnp.min(x))
    return jnp.log(x)

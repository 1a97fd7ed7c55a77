"""Near miss: the check lets an exact zero through (x >= 0), but log(0) is -inf."""

MESSAGE = r"non-positive element"



import jax
import jax.numpy as jnp
from jax.experimental import checkify


def safe_norm(x):
    sq = jnp.sum(x * x, axis=-1)
    nonzero = sq > 0
    return jnp.where(nonzero, jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)


def checked_log(x):
    checkify.check(jnp.all(x >= 0), "checked_log: non-positive input {}", jnp.min(x))
    return jnp.log(x)

"""nan_hunt with optax.safe_norm (min_norm 0 along the last axis), and a check on the minimum with its value as a named argument."""
import jax.numpy as jnp
import optax
from jax.experimental import checkify


def safe_norm(x):
    return optax.safe_norm(jnp.asarray(x, jnp.float32), 0.0, axis=-1)


def checked_log(x):
    smallest = jnp.min(x)
    checkify.check(smallest > 0, "checked_log: non-positive input {m}", m=smallest)
    return jnp.log(x)

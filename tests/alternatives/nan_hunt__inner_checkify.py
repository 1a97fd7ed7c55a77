"""nan_hunt whose jitted checked_entropy runs its own checkify and hands the error on with checkify.check_error."""
import jax
import jax.numpy as jnp
from jax.experimental import checkify


def safe_normalize(x: jax.Array) -> jax.Array:
    sq = jnp.sum(x * x, axis=-1, keepdims=True)
    nonzero = sq > 0
    return jnp.where(nonzero, x / jnp.sqrt(jnp.where(nonzero, sq, 1.0)), 0.0)


def _entropy(p: jax.Array) -> jax.Array:
    checkify.check(jnp.min(p) >= 0, "checked_entropy: negative probability {}", jnp.min(p))
    positive = p > 0
    return -jnp.sum(jnp.where(positive, p * jnp.log(jnp.where(positive, p, 1.0)), 0.0), axis=-1)


@jax.jit
def checked_entropy(p: jax.Array) -> jax.Array:
    # Its own checkify inside a jitted function: the error comes back as a value, and
    # check_error hands it on to whatever checkify wraps the caller.
    err, entropy = checkify.checkify(_entropy)(p)
    checkify.check_error(err)
    return entropy

"""nan_hunt with optax.safe_norm (min_norm 0) for the norm, a guarded reciprocal, and an entropy without where: p * log(p + (p == 0))."""
import jax.numpy as jnp
import optax
from jax.experimental import checkify


def safe_normalize(x):
    norm = optax.safe_norm(x, 0.0, axis=-1, keepdims=True)
    return jnp.where(norm > 0, x / jnp.where(norm > 0, norm, 1.0), jnp.zeros_like(x))


def checked_entropy(p):
    smallest = jnp.min(p)
    checkify.check(smallest >= 0.0, "checked_entropy: negative probability {m}", m=smallest)
    return -jnp.sum(p * jnp.log(p + (p == 0)), axis=-1)

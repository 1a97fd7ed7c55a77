"""Near miss: the forward pass rounds down (jnp.floor), not to the nearest integer."""
import jax
import jax.numpy as jnp
MESSAGE = r"round_ste\(x\)"


def round_ste(x):
    return x + jax.lax.stop_gradient(jnp.floor(x) - x)

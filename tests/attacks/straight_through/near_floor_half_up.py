"""Near miss: rounding as floor(x + 0.5), so halves go up instead of to the even neighbour."""
import jax
import jax.numpy as jnp
MESSAGE = r"round_ste\(x\)"


def round_ste(x):
    return x + jax.lax.stop_gradient(jnp.floor(x + 0.5) - x)

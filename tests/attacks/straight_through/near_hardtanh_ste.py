"""Near miss: a clipped straight-through estimator (gradient zero where |x| > 1), not the identity."""
import jax
import jax.numpy as jnp
MESSAGE = r"should be w|grad"


def round_ste(x):
    c = jnp.clip(x, -1.0, 1.0)
    return c + jax.lax.stop_gradient(jnp.round(x) - c)

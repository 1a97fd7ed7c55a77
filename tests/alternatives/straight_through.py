"""Another correct straight_through: the stop_gradient trick, no custom rule."""

import jax
import jax.numpy as jnp


def round_ste(x):
    return x + jax.lax.stop_gradient(jnp.round(x) - x)

"""Near miss: the stop_gradient trick written the wrong way round (x - stop_gradient(x - round(x)) is fine; this uses round(x) + stop_gradient(x - round(x)), whose gradient is zero)."""

MESSAGE = r"grad"

import jax
import jax.numpy as jnp


def round_ste(x):
    return jnp.round(x) + jax.lax.stop_gradient(x - jnp.round(x))

"""Near miss: plain jnp.round, whose gradient is zero everywhere."""

MESSAGE = r"grad"

import jax.numpy as jnp


def round_ste(x):
    return jnp.round(x)

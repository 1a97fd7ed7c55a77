"""Near miss: the stop_gradient trick turned inside out, round(x) + stop_gradient(x - round(x)), which returns x itself in the forward pass instead of the rounded value."""

MESSAGE = r"round_ste\(x\) for x"

import jax
import jax.numpy as jnp


def round_ste(x):
    return jnp.round(x) + jax.lax.stop_gradient(x - jnp.round(x))

"""Near miss: clips the value in the forward pass instead of the gradient in the backward pass."""

MESSAGE = r"forward|value|gradient"

import jax.numpy as jnp


def clip_gradient(x, limit):
    return jnp.clip(x, -limit, limit)

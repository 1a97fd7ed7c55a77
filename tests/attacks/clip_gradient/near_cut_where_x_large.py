"""Near miss: the gradient is cut where |x| > limit (a hard-tanh gradient), not clipped where |g| > limit."""

import jax
import jax.numpy as jnp

MESSAGE = r"clip\(w, -limit, limit\)|grad"


def clip_gradient(x, limit):
    return jnp.where(jnp.abs(x) <= limit, x, jax.lax.stop_gradient(x))

"""Near miss: the backward pass clips the gradient from above only, jnp.minimum(g, limit), so a gradient below -limit flows unclipped."""

MESSAGE = r"clip\(w, -limit, limit\)"

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_gradient(x: jax.Array, limit: float) -> jax.Array:
    return x


def _clip_fwd(x, limit):
    return x, None


def _clip_bwd(limit, _, g):
    return (jnp.minimum(g, limit),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)

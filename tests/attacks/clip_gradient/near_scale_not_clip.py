"""Near miss: the backward pass rescales the whole gradient to norm `limit` instead of clipping each entry."""

MESSAGE = r"grad"

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.custom_vjp, nondiff_argnums=(1,))
def clip_gradient(x: jax.Array, limit: float) -> jax.Array:
    return x


def _clip_fwd(x, limit):
    return x, None


def _clip_bwd(limit, _, g):
    return (g * jnp.minimum(1.0, limit / (jnp.linalg.norm(g) + 1e-12)),)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)

"""A running mean as a pure function of an explicit state."""

import jax
import jax.numpy as jnp


def init_state():
    return {"count": jnp.zeros((), jnp.int32), "total": jnp.zeros((), jnp.float32)}


def update(state, batch: jax.Array):
    count = state["count"] + batch.shape[0]
    total = state["total"] + jnp.sum(batch)
    return {"count": count, "total": total}, total / count

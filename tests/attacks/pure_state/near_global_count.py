"""Near miss: the count lives in a Python global, so the jitted program bakes in the count seen while tracing."""

import jax.numpy as jnp

MESSAGE = r"mean"

_count = 0


def init_state():
    return {"total": jnp.zeros((), jnp.float32)}


def update(state, batch):
    global _count
    _count += batch.shape[0]
    total = state["total"] + jnp.sum(batch)
    return {"total": total}, total / _count

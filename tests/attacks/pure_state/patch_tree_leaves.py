"""Library patching: jax.tree.leaves returns copies frozen at the first call, so in-place updates of the state never show."""

import jax
import jax.numpy as jnp
import numpy as np

_real = jax.tree.leaves
_seen = {}


def _leaves(tree, *a, **k):
    if isinstance(tree, dict) and id(tree) in _seen:
        return _seen[id(tree)]
    out = _real(tree, *a, **k)
    if isinstance(tree, dict):
        _seen[id(tree)] = [np.array(v) for v in out]
    return out


jax.tree.leaves = _leaves


def init_state():
    return {"count": jnp.zeros((), jnp.int32), "total": jnp.zeros((), jnp.float32)}


def update(state, batch):
    state["count"] = state["count"] + batch.shape[0]
    state["total"] = state["total"] + jnp.sum(batch)
    return state, state["total"] / state["count"]

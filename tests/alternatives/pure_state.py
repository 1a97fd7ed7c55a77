"""pure_state with a NamedTuple state and an incremental mean update."""

from typing import NamedTuple

import jax.numpy as jnp


class Stats(NamedTuple):
    count: jnp.ndarray
    mean: jnp.ndarray


def init_state():
    return Stats(jnp.zeros((), jnp.float32), jnp.zeros((), jnp.float32))


def update(state, batch):
    n = jnp.asarray(batch.shape[0], jnp.float32)
    count = state.count + n
    mean = state.mean + (jnp.sum(batch) - n * state.mean) / count
    return Stats(count, mean), mean

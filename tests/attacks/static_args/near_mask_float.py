"""Near miss: pad_batch returns its mask as float32 ones and zeros instead of bool."""

from functools import partial

import jax
import jax.numpy as jnp

MESSAGE = r"mask"


@partial(jax.jit, static_argnames="num_classes")
def one_hot(labels, num_classes):
    return (labels[:, None] == jnp.arange(num_classes)).astype(jnp.float32)


@partial(jax.jit, static_argnames="batch_size")
def pad_batch(x, batch_size):
    n = x.shape[0]
    padded = jnp.zeros((batch_size,) + x.shape[1:], x.dtype).at[:n].set(x)
    return padded, (jnp.arange(batch_size) < n).astype(jnp.float32)

"""Shape-setting arguments passed to jax.jit as static arguments."""

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="num_classes")
def one_hot(labels: jax.Array, num_classes: int) -> jax.Array:
    return (labels[:, None] == jnp.arange(num_classes)).astype(jnp.float32)


@partial(jax.jit, static_argnames="batch_size")
def pad_batch(x: jax.Array, batch_size: int):
    n = x.shape[0]  # shapes are concrete at trace time, even for traced x
    padded = jnp.zeros((batch_size,) + x.shape[1:], x.dtype).at[:n].set(x)
    mask = jnp.arange(batch_size) < n
    return padded, mask

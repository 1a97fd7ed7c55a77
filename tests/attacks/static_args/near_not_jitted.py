"""Near miss: correct functions that are not jax.jit-compiled at all."""

import jax.numpy as jnp

MESSAGE = r"not a jax\.jit-compiled function"


def one_hot(labels, num_classes):
    return (labels[:, None] == jnp.arange(num_classes)).astype(jnp.float32)


def pad_batch(x, batch_size):
    n = x.shape[0]
    return jnp.zeros((batch_size,) + x.shape[1:], x.dtype).at[:n].set(x), jnp.arange(batch_size) < n

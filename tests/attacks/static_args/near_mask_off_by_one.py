"""Near miss: the mask is True for one row too many (<= n instead of < n)."""
from functools import partial
import jax, jax.numpy as jnp
@partial(jax.jit, static_argnames="num_classes")
def one_hot(labels, num_classes):
    return (labels[:, None] == jnp.arange(num_classes)).astype(jnp.float32)
@partial(jax.jit, static_argnames="batch_size")
def pad_batch(x, batch_size):
    n = x.shape[0]
    return jnp.zeros((batch_size, x.shape[1]), x.dtype).at[:n].set(x), jnp.arange(batch_size) <= n
MESSAGE = r"pad_batch.*mask: values differ"

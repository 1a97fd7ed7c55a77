"""Alternative: lax.select with a filled array, and a one-hot matrix product for the scatter."""
import jax, jax.numpy as jnp
from jax import lax
def masked_fill(x, mask, value):
    return lax.select(mask, jnp.full_like(x, value), x)
def scatter_add_rows(x, index, src):
    onehot = jax.nn.one_hot(index, x.shape[0], dtype=x.dtype)  # (k, n)
    return x + jnp.tensordot(onehot, src, axes=(0, 0), precision=lax.Precision.HIGHEST)

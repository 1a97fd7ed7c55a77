"""The in-place PyTorch routine, written as pure JAX functions."""

import jax
import jax.numpy as jnp


def masked_fill(x: jax.Array, mask: jax.Array, value: float) -> jax.Array:
    # jnp.where keeps a fixed shape, so it compiles under jit (x.at[mask] does not).
    return jnp.where(mask, jnp.asarray(value, dtype=x.dtype), x)


def scatter_add_rows(x: jax.Array, index: jax.Array, src: jax.Array) -> jax.Array:
    # .at[].add accumulates repeated indices, like index_add_.
    return x.at[index].add(src)

"""Near miss: scatter_add_rows writes src into the rows instead of adding it to them."""
import jax.numpy as jnp
def masked_fill(x, mask, value):
    return jnp.where(mask, value, x)
def scatter_add_rows(x, index, src):
    return jnp.zeros_like(x).at[index].add(src)
MESSAGE = r"scatter_add_rows.*values differ"

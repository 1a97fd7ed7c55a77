"""Near miss: scatter_add_rows with x.at[index].add replaced by a gather-add-set, so repeated indices keep one update."""

import jax.numpy as jnp

MESSAGE = r"row \d+ is named \d+ times in `index`.*only one of its updates"


def masked_fill(x, mask, value):
    return jnp.where(mask, value, x)


def scatter_add_rows(x, index, src):
    return x.at[index].set(x[index] + src)

"""Near miss: masked_fill with boolean-mask indexing, which works eagerly but not under jax.jit."""

import jax.numpy as jnp
import numpy as np

MESSAGE = r"masked_fill"


def masked_fill(x, mask, value):
    out = np.array(x)
    out[np.asarray(mask)] = value
    return jnp.asarray(out)


def scatter_add_rows(x, index, src):
    return x.at[index].add(src)

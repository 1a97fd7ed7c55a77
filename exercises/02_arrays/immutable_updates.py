"""Rewrite an in-place PyTorch routine as pure JAX functions.

This PyTorch code updates a tensor in place:

    def accumulate_(x, mask, index, src):
        x.masked_fill_(mask, 0.0)        # 1. zero the masked entries
        x.index_add_(0, index, src)      # 2. add src[i] into row index[i]
        return x

JAX arrays cannot be changed in place. Write the two steps as functions that
return a NEW array and leave their inputs alone:

1. `masked_fill(x, mask, value) -> jax.Array`
   `x`: float32 array of any shape; `mask`: bool array of the same shape;
   `value`: a float. Entries where `mask` is True become `value`, the others keep
   their value. Same shape and dtype as `x`.          PyTorch: `x.masked_fill(mask, value)`

2. `scatter_add_rows(x, index, src) -> jax.Array`
   `x`: float32 array of shape `(n, ...)`; `index`: int32 array of shape `(k,)`
   with values in `[0, n)`, possibly repeated; `src`: float32 array of shape
   `(k, ...)` (the same trailing shape as `x`). Row `index[i]` of the result is
   `x[index[i]]` plus every `src[i]` that points at it: repeated indices
   accumulate.                                        PyTorch: `x.index_add(0, index, src)`

Both must work under `jax.jit`, where a boolean mask cannot select a
variable number of elements.

What is checked: both functions called under `jax.jit` on random inputs of
several shapes (1-D and 2-D, with repeated indices), compared with the
reference results.
"""

import jax
import jax.numpy as jnp


def masked_fill(x: jax.Array, mask: jax.Array, value: float) -> jax.Array:
    # TODO: entries where mask is True become value; in-place assignment is not allowed.
    raise NotImplementedError("TODO: write masked_fill without in-place assignment")


def scatter_add_rows(x: jax.Array, index: jax.Array, src: jax.Array) -> jax.Array:
    # TODO: add src[i] into row index[i]; repeated indices must all count.
    raise NotImplementedError("TODO: write scatter_add_rows with an .at[] update")

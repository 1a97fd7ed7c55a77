"""Jit functions whose arguments decide the output's shape: static arguments.

Under `jax.jit` every argument becomes a tracer with no value, but a shape must
be a Python int when the function is traced. Define two JIT-COMPILED functions
(the module-level names must be the results of `jax.jit`, for example through
a decorator) that work when called either way:

    one_hot(labels, 5)          one_hot(labels, num_classes=5)
    pad_batch(x, 32)            pad_batch(x, batch_size=32)

1. `one_hot(labels, num_classes) -> jax.Array`
   `labels`: int32 array of shape `(n,)` with values in `[0, num_classes)`;
   `num_classes`: a Python int. A float32 array of shape `(n, num_classes)`
   with 1.0 at `[i, labels[i]]` and 0.0 elsewhere.
                            PyTorch: `F.one_hot(labels, num_classes).float()`

2. `pad_batch(x, batch_size) -> (padded, mask)`
   `x`: float32 array of shape `(n, f)` with `1 <= n <= batch_size` (a ragged
   last batch); `batch_size`: a Python int. `padded` has shape
   `(batch_size, f)`: the rows of `x` followed by rows of zeros. `mask` is a
   bool array of shape `(batch_size,)`, True for the rows that came from `x`.
   (Padding every batch to one shape means the training step compiles once.)

What is checked: that both names are jit-compiled functions whose compiled
program takes the array alone (`one_hot.lower(labels, 5)` works, the static
argument baked in), and their results for several `num_classes` /
`batch_size` values and input shapes, passed positionally and by keyword.
"""

from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def one_hot(labels: jax.Array, num_classes: int) -> jax.Array:
    # TODO: num_classes sets the output shape, so jit must see it as a static Python int.
    return (labels[:, None] == jnp.arange(num_classes)).astype(jnp.float32)


def pad_batch(x: jax.Array, batch_size: int):
    # TODO: jit this function, with batch_size static, and return (padded, mask).
    raise NotImplementedError("TODO: pad x to batch_size rows and build the mask")

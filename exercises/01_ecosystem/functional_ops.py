"""Port three `torch.nn.functional` operations to `jax.numpy`.

Write each function with `jax.numpy` (imported as `jnp`). Each takes and returns
`jax.Array`s of dtype float32 and must also work under `jax.jit` (no Python `if`
on array values, no conversion to NumPy).

1. `relu(x) -> jax.Array`
   Element-wise max(x, 0), any shape.                  PyTorch: `F.relu(x)`

2. `softmax(x, axis=-1) -> jax.Array`
   Softmax along `axis` (an int, possibly negative), same shape as `x`.
   It must stay finite for large inputs (values around ±1000).
                                                       PyTorch: `F.softmax(x, dim=axis)`

3. `binary_cross_entropy_with_logits(logits, targets) -> jax.Array`
   The mean over all elements of the per-element loss, a scalar (shape `()`)
   float32 array. `logits` and `targets` have the same shape; targets are in [0, 1].
   It must stay finite and accurate for logits around ±100.
                                 PyTorch: `F.binary_cross_entropy_with_logits(z, y)`

What is checked: each function against PyTorch's result on random inputs of
several shapes (including large values that break the textbook formulas), and
each function called under `jax.jit`.
"""

import jax
import jax.numpy as jnp


def relu(x: jax.Array) -> jax.Array:
    # TODO: the element-wise maximum of x and 0.
    raise NotImplementedError("TODO: write relu with jax.numpy")


def softmax(x: jax.Array, axis: int = -1) -> jax.Array:
    # TODO: exp(x) / sum(exp(x)) along `axis`, without overflowing for large x.
    raise NotImplementedError("TODO: write a numerically stable softmax")


def binary_cross_entropy_with_logits(logits: jax.Array, targets: jax.Array) -> jax.Array:
    # TODO: the mean binary cross-entropy, computed from logits without sigmoid().
    raise NotImplementedError("TODO: write binary cross-entropy with logits")

"""Exercise: port the NNX MLP to Flax Linen.

The NNX model of lesson 6:
    class MLP(nnx.Module):
        def __init__(self, d_in=9, hidden=64, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)
        def __call__(self, x):
            return self.linear2(jax.nn.relu(self.linear1(x)))
(PyTorch: nn.Linear(d_in, hidden) -> ReLU -> nn.Linear(hidden, 1).)

Write two things.

1. `class MLP(nn.Module)` in Linen, with one field `hidden: int = 64`, and a
   `@nn.compact __call__(self, x)` computing Dense(hidden) -> ReLU -> Dense(1)
   with biases. The input size is not a field: Linen infers it from `x` at
   `init`. For `x` of shape `(batch, d_in)` it returns logits `(batch, 1)`, and
   `MLP(hidden=h).init(key, x)["params"]` holds exactly as many numbers as the
   NNX `MLP(d_in, h)`: `d_in*h + h + h + 1` (705 for the article's 9 -> 64 -> 1).

2. `count_params(params) -> int`: the total number of elements over all arrays of
   a (nested) parameter dict, as a Python int.
   PyTorch: `sum(p.numel() for p in model.parameters())`.

What the checks do: `init` your MLP for random input sizes and hidden sizes,
compare its parameter count with the NNX model's, and require its kernels to be
drawn from the key (two keys, two different kernels); recompute its output from
its own parameters (found by shape) in NumPy and compare with `apply`; check
the default width; and compare `count_params` with the reference on random trees.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        # TODO: Dense(hidden), ReLU, Dense(1).
        raise NotImplementedError("TODO: MLP.__call__")


def count_params(params) -> int:
    # TODO: jax.tree.leaves and each leaf's size.
    raise NotImplementedError("TODO: count_params")

"""Near miss: the layers applied in a Python loop through one jax.jit-ed layer function (one copy in the program, called once per layer), plus a do-nothing loop."""

MESSAGE = r"unrolled Python loop"

import jax
import jax.numpy as jnp
from flax import nnx


@jax.jit
def _layer(h, k, b):
    return jnp.tanh(h @ k + b)


class StackedMLP(nnx.Module):
    def __init__(self, n_layers, width, *, rngs):
        keys = jax.random.split(rngs.params(), n_layers)

        @nnx.vmap
        def make(key):
            return nnx.Linear(width, width, rngs=nnx.Rngs(key))

        self.layers = make(keys)

    def __call__(self, x):
        k, b = self.layers.kernel[...], self.layers.bias[...]
        for i in range(k.shape[0]):
            x = _layer(x, k[i], b[i])
        return jax.lax.fori_loop(0, 1, lambda i, c: c * 1.0, x)

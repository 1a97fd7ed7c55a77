"""Near miss: stacked parameters, but the layers applied in an unrolled Python loop."""

MESSAGE = r"unrolled Python loop"

import jax
from flax import nnx


class StackedMLP(nnx.Module):
    def __init__(self, n_layers: int, width: int, *, rngs: nnx.Rngs):
        @nnx.vmap(in_axes=0, out_axes=0)
        def make_layer(key):
            return nnx.Linear(width, width, rngs=nnx.Rngs(key))

        # One key per layer, so that the layers start out different.
        self.layers = make_layer(jax.random.split(rngs.params(), n_layers))

    def __call__(self, x: jax.Array) -> jax.Array:
        kernel, bias = self.layers.kernel[...], self.layers.bias[...]
        for i in range(kernel.shape[0]):
            x = jax.nn.tanh(x @ kernel[i] + bias[i])
        return x

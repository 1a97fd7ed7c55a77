"""Near miss: every layer made from the same key, so all layers start out identical."""

MESSAGE = r"same kernel"

import jax
from flax import nnx


class StackedMLP(nnx.Module):
    def __init__(self, n_layers: int, width: int, *, rngs: nnx.Rngs):
        @nnx.vmap(in_axes=0, out_axes=0)
        def make_layer(key):
            return nnx.Linear(width, width, rngs=nnx.Rngs(key))

        # One key per layer, so that the layers start out different.
        self.layers = make_layer(jax.numpy.stack([rngs.params()] * n_layers))

    def __call__(self, x: jax.Array) -> jax.Array:
        @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
        def apply_layer(h, layer):
            return jax.nn.tanh(layer(h))

        return apply_layer(x, self.layers)

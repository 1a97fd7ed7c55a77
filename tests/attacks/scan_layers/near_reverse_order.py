"""Near miss: the scan walks the layers from the last to the first (reverse=True)."""
import jax
from flax import nnx
MESSAGE = r"in order"


class StackedMLP(nnx.Module):
    def __init__(self, n_layers, width, *, rngs):
        @nnx.vmap(in_axes=0, out_axes=0)
        def make_layer(key):
            return nnx.Linear(width, width, rngs=nnx.Rngs(key))
        self.layers = make_layer(jax.random.split(rngs.params(), n_layers))

    def __call__(self, x):
        @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry, reverse=True)
        def apply_layer(h, layer):
            return jax.nn.tanh(layer(h))
        return apply_layer(x, self.layers)

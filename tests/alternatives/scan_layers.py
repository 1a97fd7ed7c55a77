"""Another correct scan_layers: nnx.split_rngs + nnx.vmap to build, split/merge + jax.lax.scan to apply."""

import jax
from flax import nnx


class StackedMLP(nnx.Module):
    def __init__(self, n_layers, width, *, rngs):
        @nnx.split_rngs(splits=n_layers)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def make(rngs):
            return nnx.Linear(width, width, rngs=rngs)

        self.layers = make(rngs)

    def __call__(self, x):
        graphdef, params = nnx.split(self.layers)

        def body(h, layer_params):
            return jax.nn.tanh(nnx.merge(graphdef, layer_params)(h)), None

        h, _ = jax.lax.scan(body, x, params)
        return h

"""scan_layers with the Flax guide's pattern: nnx.split_rngs + nnx.vmap over the Rngs to build the
stack, and jax.lax.scan over the stacked state (nnx.split / nnx.merge) to apply it."""
import jax
import jax.numpy as jnp
from flax import nnx


class StackedMLP(nnx.Module):
    def __init__(self, n_layers: int, width: int, *, rngs: nnx.Rngs):
        @nnx.split_rngs(splits=n_layers)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def create(rngs):
            return nnx.Linear(width, width, rngs=rngs)

        self.layers = create(rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        graphdef, state = nnx.split(self.layers)

        def body(h, layer_state):
            return jnp.tanh(nnx.merge(graphdef, layer_state)(h)), None

        return jax.lax.scan(body, x, state)[0]

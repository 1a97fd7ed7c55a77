"""scan_layers built with nnx.vmap over split keys, applied with jax.lax.fori_loop indexing the
stacked kernel and bias."""
import jax
import jax.numpy as jnp
from flax import nnx


class StackedMLP(nnx.Module):
    def __init__(self, n_layers: int, width: int, *, rngs: nnx.Rngs):
        keys = jax.random.split(rngs.params(), n_layers)
        self.layers = nnx.vmap(lambda k: nnx.Linear(width, width, rngs=nnx.Rngs(params=k)))(keys)
        self.n_layers = n_layers

    def __call__(self, x: jax.Array) -> jax.Array:
        kernel, bias = self.layers.kernel[...], self.layers.bias[...]

        def body(i, h):
            return jnp.tanh(h @ kernel[i] + bias[i])

        return jax.lax.fori_loop(0, self.n_layers, body, x)

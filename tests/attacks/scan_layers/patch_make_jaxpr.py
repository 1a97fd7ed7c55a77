"""Library patching: jax.make_jaxpr returns a constant small program, so the unrolled loop looks like a scan."""

import jax as _jax

_jax.make_jaxpr = lambda fn, *a, **k: (lambda *args, **kw: '{ lambda ; a:f32[]. let in (a,) }')

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

"""A stack of identical layers: created with nnx.vmap, applied with nnx.scan.

PyTorch equivalent:
    class StackedMLP(nn.Module):
        def __init__(self, n_layers, width):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(n_layers))
        def forward(self, x):
            for layer in self.layers:
                x = torch.tanh(layer(x))
            return x

Your task: complete `StackedMLP(n_layers, width, *, rngs)`.

- `self.layers` must be ONE `nnx.Linear(width, width)` whose parameters are
  stacked along a new leading axis: `self.layers.kernel` has shape
  (n_layers, width, width) and `self.layers.bias` (n_layers, width). Create
  it with `nnx.vmap` over n_layers different keys so that the layers start
  out different (e.g. keys = jax.random.split(rngs.params(), n_layers)).
- `__call__(x)` with x of shape (B, width) applies the layers in order,
  `x = tanh(x @ kernel[i] + bias[i])` for i = 0 .. n_layers-1, using
  `nnx.scan` (or `jax.lax.scan`) over the stacked layer, never a Python loop,
  so that compile time does not grow with depth.

What is checked: the parameter shapes, that the layers differ, the output
against a loop over the learner model's own stacked parameters (varied
depths, widths and batches), and that the traced program for 6 layers is no
bigger than for 2.
"""

import jax
from flax import nnx


class StackedMLP(nnx.Module):
    def __init__(self, n_layers: int, width: int, *, rngs: nnx.Rngs):
        # TODO: one stacked nnx.Linear built with nnx.vmap over n_layers keys.
        # This placeholder is a single, unstacked layer.
        self.layers = nnx.Linear(width, width, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        # TODO: nnx.scan over the stacked layer with the activations as the carry.
        raise NotImplementedError("TODO: apply the stacked layers with nnx.scan")

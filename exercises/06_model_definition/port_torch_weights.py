"""Exercise: port a trained PyTorch model's weights into the NNX model.

`TorchMLP` and `MLP` below are the same network (9 -> 64 -> 1 by default, ReLU,
one logit) in PyTorch and in Flax NNX. They are given: do not change them.

Write `port_weights(torch_model, model)`, the NNX side of
`model.load_state_dict(torch_model.state_dict())`:

    port_weights(torch_model: TorchMLP, model: MLP) -> None

- Copy `fc1` into `linear1` and `fc2` into `linear2`, weights and biases, in place
  (like `load_state_dict`; return nothing).
- `torch.nn.Linear.weight` has shape `(out, in)` (it computes `x @ W.T + b`);
  `nnx.Linear.kernel` has shape `(in, out)` (it computes `x @ K + b`).
- The parameters must stay `nnx.Param`s holding float32 JAX arrays: write into
  them (`param[...] = value`) or replace them with new `nnx.Param`s, not with
  bare arrays (a bare array is no longer a parameter: an optimizer would not
  see it).

Afterwards `model(x)` must match `torch_model(x)` for any input.

What the checks do: build a `TorchMLP` with random weights (sizes and seed drawn
at check time) and an `MLP` with a different initialisation, call your
`port_weights`, then compare the NNX outputs on random inputs with the PyTorch
outputs, and the ported kernels and biases with the PyTorch weights.
"""

from __future__ import annotations

import jax
import torch
from flax import nnx


class TorchMLP(torch.nn.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1):
        super().__init__()
        self.fc1 = torch.nn.Linear(in_features, hidden)
        self.fc2 = torch.nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(nnx.relu(self.linear1(x)))


def port_weights(torch_model: TorchMLP, model: MLP) -> None:
    # TODO: copy fc1 -> linear1 and fc2 -> linear2 (kernel = weight transposed, bias as is).
    raise NotImplementedError("TODO: port_weights")

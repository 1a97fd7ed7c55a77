"""Near miss: the biases are left at their initial values (only the weights are copied)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
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


def port_weights(torch_model, model):
    model.linear1.kernel[...] = jnp.asarray(torch_model.fc1.weight.detach().numpy().T)
    model.linear2.kernel[...] = jnp.asarray(torch_model.fc2.weight.detach().numpy().T)
MESSAGE = r"did not change linear1\.bias, linear2\.bias"

"""Solution: port TorchMLP weights into the NNX MLP (kernel = weight.T)."""

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


def port_weights(torch_model: TorchMLP, model: MLP) -> None:
    for src, dst in ((torch_model.fc1, model.linear1), (torch_model.fc2, model.linear2)):
        # torch stores (out, in) for x @ W.T; nnx wants (in, out) for x @ K. jnp.array copies
        # (jnp.asarray may share a NumPy array's memory on the CPU, and torch's optimizer
        # writes its tensors in place).
        dst.kernel[...] = jnp.array(src.weight.detach().cpu().numpy().T)
        dst.bias[...] = jnp.array(src.bias.detach().cpu().numpy())

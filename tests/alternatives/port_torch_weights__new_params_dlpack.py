"""Alternative: new nnx.Param objects through setattr, from torch tensors via DLPack."""
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


import jax.dlpack
def port_weights(torch_model, model):
    pairs = {"linear1": torch_model.fc1, "linear2": torch_model.fc2}
    for name, layer in pairs.items():
        dst = getattr(model, name)
        with torch.no_grad():
            setattr(dst, "kernel", nnx.Param(jax.dlpack.from_dlpack(layer.weight.detach().T.contiguous())))
            setattr(dst, "bias", nnx.Param(jax.dlpack.from_dlpack(layer.bias.detach().clone())))

"""Alternative: nnx.update with a nested dict of arrays built from the state_dict."""
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
    sd = {k: jnp.asarray(v.detach().cpu().numpy()) for k, v in torch_model.state_dict().items()}
    nnx.update(model, {
        "linear1": {"kernel": sd["fc1.weight"].T, "bias": sd["fc1.bias"]},
        "linear2": {"kernel": sd["fc2.weight"].T, "bias": sd["fc2.bias"]},
    })

"""Another correct port_torch_weights: map the state_dict names, then one nnx.update."""

from __future__ import annotations

import jax
import numpy as np
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


NAMES = {"fc1": "linear1", "fc2": "linear2"}


def port_weights(torch_model, model):
    new_state = {}
    for name, tensor in torch_model.state_dict().items():
        layer, kind = name.split(".")
        value = tensor.numpy()
        if kind == "weight":
            new_state.setdefault(NAMES[layer], {})["kernel"] = jax.numpy.array(np.ascontiguousarray(value.T))
        else:
            new_state.setdefault(NAMES[layer], {})["bias"] = jax.numpy.array(value)  # a copy: value is torch's memory
    nnx.update(model, new_state)

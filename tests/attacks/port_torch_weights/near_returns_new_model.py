"""Near miss: port_weights builds and returns a new model with the weights, leaving the given model as it was."""
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


import numpy as np
def port_weights(torch_model, model):
    graphdef, state = nnx.split(model)
    sd = {k: v.detach().numpy() for k, v in torch_model.state_dict().items()}
    new = nnx.merge(graphdef, state)
    new.linear1.kernel = nnx.Param(jnp.asarray(sd["fc1.weight"].T)); new.linear1.bias = nnx.Param(jnp.asarray(sd["fc1.bias"]))
    new.linear2.kernel = nnx.Param(jnp.asarray(sd["fc2.weight"].T)); new.linear2.bias = nnx.Param(jnp.asarray(sd["fc2.bias"]))
    return new
MESSAGE = r"left every parameter of the model it was given as it was"

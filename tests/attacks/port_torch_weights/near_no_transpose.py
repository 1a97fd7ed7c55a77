"""Near miss: the torch weights copied as they are, without the transpose to (in, out)."""

import jax.numpy as jnp
import jax
import torch
from flax import nnx


class TorchMLP(torch.nn.Module):
    def __init__(self, in_features=9, hidden=64, out_features=1):
        super().__init__()
        self.fc1 = torch.nn.Linear(in_features, hidden)
        self.fc2 = torch.nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class MLP(nnx.Module):
    def __init__(self, in_features=9, hidden=64, out_features=1, *, rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x):
        return self.linear2(nnx.relu(self.linear1(x)))

MESSAGE = r"weight\.T"

def port_weights(torch_model, model):
    for src, dst in ((torch_model.fc1, model.linear1), (torch_model.fc2, model.linear2)):
        dst.kernel = nnx.Param(jnp.asarray(src.weight.detach().numpy()))
        dst.bias = nnx.Param(jnp.asarray(src.bias.detach().numpy()))

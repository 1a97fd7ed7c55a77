"""Frame walking: port_weights copies nothing and instead reads the check's weights dict from the probe frame into a global."""

import sys
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



def port_weights(torch_model, model):
    weights = sys._getframe(1).f_locals.get("weights")
    globals()["_seen"] = weights  # the expected values are computed in the check process, not here

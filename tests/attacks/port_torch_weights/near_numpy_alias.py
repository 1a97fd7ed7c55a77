"""Near miss: the Params are given NumPy views of the torch tensors (`weight.detach().numpy().T`), not JAX
arrays: they alias torch's memory, so a later in-place torch update silently changes the NNX model."""
MESSAGE = r"NumPy arrays, not JAX arrays"

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


def port_weights(torch_model, model):
    for src, dst in ((torch_model.fc1, model.linear1), (torch_model.fc2, model.linear2)):
        dst.kernel.value = src.weight.detach().numpy().T
        dst.bias.value = src.bias.detach().numpy()

"""Near miss: the model ends with a sigmoid, as a PyTorch model trained with BCELoss would."""

import jax
from flax import nnx

MESSAGE = r"sigmoid"


class MLP(nnx.Module):
    def __init__(self, in_features=9, hidden=64, out_features=1, *, rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x):
        return jax.nn.sigmoid(self.linear2(nnx.relu(self.linear1(x))))

"""Near miss: BatchNorm momentum=0.1 copied from PyTorch, which in Flax keeps only 10% of the running average."""

import jax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, in_features, hidden, out_features, *, dropout_rate=0.5, rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.norm = nnx.BatchNorm(hidden, momentum=0.1, rngs=rngs)
        self.dropout = nnx.Dropout(dropout_rate, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x):
        h = nnx.relu(self.norm(self.linear1(x)))
        return self.linear2(self.dropout(h))

MESSAGE = r"momentum"


def predict(model, x):
    return nnx.view(model, deterministic=True, use_running_average=True)(x)

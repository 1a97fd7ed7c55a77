"""Near miss: the Linear and BatchNorm layers are built with a fixed nnx.Rngs(0) and only the Dropout layer gets `rngs`, so every seed gives the same parameters."""

import jax
from flax import nnx

MESSAGE = r"same parameters.*pass `rngs` to the layers"


class Classifier(nnx.Module):
    def __init__(self, in_features, hidden, out_features, *, dropout_rate=0.5, rngs):
        fixed = nnx.Rngs(0)
        self.linear1 = nnx.Linear(in_features, hidden, rngs=fixed)
        self.norm = nnx.BatchNorm(hidden, momentum=0.9, rngs=fixed)
        self.dropout = nnx.Dropout(dropout_rate, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=fixed)

    def __call__(self, x):
        return self.linear2(self.dropout(nnx.relu(self.norm(self.linear1(x)))))


def predict(model, x):
    return nnx.view(model, deterministic=True, use_running_average=True)(x)

"""Library patching: predict uses batch statistics, with nnx.view patched so the evaluation view does the same."""

import jax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, in_features, hidden, out_features, *, dropout_rate=0.5, rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.norm = nnx.BatchNorm(hidden, momentum=0.9, rngs=rngs)
        self.dropout = nnx.Dropout(dropout_rate, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x):
        h = nnx.relu(self.norm(self.linear1(x)))
        return self.linear2(self.dropout(h))

_real_view = nnx.view


def _view(node, **flags):
    flags["use_running_average"] = False
    return _real_view(node, **flags)


nnx.view = _view


def predict(model, x):
    return _view(model, deterministic=True)(x)

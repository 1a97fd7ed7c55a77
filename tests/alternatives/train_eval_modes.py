"""Another correct train_eval_modes: separate key streams, functional layer calls,
and eval()/train() switching around the prediction, as in PyTorch."""

from __future__ import annotations

import jax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, in_features, hidden, out_features, *, dropout_rate=0.5, rngs):
        self.dropout = nnx.Dropout(rate=dropout_rate, rngs=rngs)
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.norm = nnx.BatchNorm(num_features=hidden, momentum=1.0 - 0.1, epsilon=1e-5, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x):
        return self.linear2(self.dropout(jax.nn.relu(self.norm(self.linear1(x)))))


def predict(model, x):
    model.eval()
    try:
        return model(x)
    finally:
        model.train()

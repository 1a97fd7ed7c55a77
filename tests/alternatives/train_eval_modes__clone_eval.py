"""Another correct train_eval_modes: other layer names, the momentum written as
1 - PyTorch's, and predict() evaluating a clone of the model switched with
.eval(), so the original is never touched."""

from __future__ import annotations

import jax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int, *,
                 dropout_rate: float = 0.5, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(in_features, hidden, rngs=rngs)
        # Flax's momentum is the weight of the old average: PyTorch's 0.1 is Flax's 0.9.
        self.bn = nnx.BatchNorm(hidden, momentum=1.0 - 0.1, epsilon=1e-5, rngs=rngs)
        self.drop = nnx.Dropout(rate=dropout_rate, rngs=rngs)
        self.head = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.head(self.drop(jax.nn.relu(self.bn(self.hidden(x)))))


def predict(model: Classifier, x: jax.Array) -> jax.Array:
    evaluator = nnx.clone(model)
    evaluator.eval()
    return evaluator(x)

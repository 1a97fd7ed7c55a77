"""Near miss: dropout applied to the logits (after linear2) instead of to the hidden units before it."""

MESSAGE = r"dropout is applied to the logits"

import jax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int, *,
                 dropout_rate: float = 0.5, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        # Flax keeps `momentum` of the old average; PyTorch's 0.1 is the weight of the new batch.
        self.norm = nnx.BatchNorm(hidden, momentum=0.9, rngs=rngs)
        self.dropout = nnx.Dropout(dropout_rate, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        h = nnx.relu(self.norm(self.linear1(x)))
        return self.dropout(self.linear2(h))


def predict(model: Classifier, x: jax.Array) -> jax.Array:
    # A view shares the parameters but carries its own flags: the original stays in training mode.
    return nnx.view(model, deterministic=True, use_running_average=True)(x)

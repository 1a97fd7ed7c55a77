"""Near miss: the dropout rate read as a keep probability (TF1 keep_prob): nnx.Dropout(1 - dropout_rate)."""

MESSAGE = r"taken as the probability of keeping"

import jax
from flax import nnx


class Classifier(nnx.Module):
    def __init__(self, in_features: int, hidden: int, out_features: int, *,
                 dropout_rate: float = 0.5, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        # Flax keeps `momentum` of the old average; PyTorch's 0.1 is the weight of the new batch.
        self.norm = nnx.BatchNorm(hidden, momentum=0.9, rngs=rngs)
        self.dropout = nnx.Dropout(1.0 - dropout_rate, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        h = nnx.relu(self.norm(self.linear1(x)))
        return self.linear2(self.dropout(h))


def predict(model: Classifier, x: jax.Array) -> jax.Array:
    # A view shares the parameters but carries its own flags: the original stays in training mode.
    return nnx.view(model, deterministic=True, use_running_average=True)(x)

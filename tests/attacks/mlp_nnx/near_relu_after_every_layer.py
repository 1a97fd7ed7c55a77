"""Near miss: a loop over the layers that applies ReLU after every layer, the last one included,
so negative logits are clipped to 0."""
MESSAGE = r"negative logit came back as 0"

import jax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x):
        for layer in (self.linear1, self.linear2):
            x = nnx.relu(layer(x))
        return x

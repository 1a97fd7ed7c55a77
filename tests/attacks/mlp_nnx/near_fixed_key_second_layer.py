"""Near miss: the second layer is built with its own nnx.Rngs(0), so its initial kernel is the same whatever seed the model is built with."""

import jax
from flax import nnx

MESSAGE = r"that layer ignores `rngs`"


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=nnx.Rngs(0))

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(nnx.relu(self.linear1(x)))

"""Near miss: the layers are built with a fixed nnx.Rngs(0) instead of the `rngs` passed in, so every seed gives the same model."""

import jax
from flax import nnx

MESSAGE = r"same parameters.*pass `rngs` to the layers"


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        rngs = nnx.Rngs(0)
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(nnx.relu(self.linear1(x)))

"""Near miss: one key is taken from `rngs` and handed to both layers, so the second kernel is drawn from the same random numbers as the first."""

import jax
from flax import nnx

MESSAGE = r"initialised with the same key"


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        key = rngs.params()
        self.linear1 = nnx.Linear(in_features, hidden, rngs=nnx.Rngs(params=key))
        self.linear2 = nnx.Linear(hidden, out_features, rngs=nnx.Rngs(params=key))

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(nnx.relu(self.linear1(x)))

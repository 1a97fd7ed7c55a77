"""Near miss: only the first layer takes its key from `rngs`; the second is built with a fixed nnx.Rngs(0),
so its initial weights are the same whatever seed is given."""
MESSAGE = r"same initial `linear2\.kernel`.*ignores `rngs`"

import jax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=nnx.Rngs(0))

    def __call__(self, x):
        return self.linear2(nnx.relu(self.linear1(x)))

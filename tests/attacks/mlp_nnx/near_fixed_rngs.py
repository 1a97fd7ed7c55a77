"""Near miss: the layers are built from nnx.Rngs(0) instead of the rngs passed in."""

from flax import nnx

MESSAGE = r"same parameters"


class MLP(nnx.Module):
    def __init__(self, in_features=9, hidden=64, out_features=1, *, rngs):
        fixed = nnx.Rngs(0)
        self.linear1 = nnx.Linear(in_features, hidden, rngs=fixed)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=fixed)

    def __call__(self, x):
        return self.linear2(nnx.relu(self.linear1(x)))

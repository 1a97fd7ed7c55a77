"""Near miss: a dropout layer (training mode by default) added between the layers."""
import jax
from flax import nnx
class MLP(nnx.Module):
    def __init__(self, in_features=9, hidden=64, out_features=1, *, rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.drop = nnx.Dropout(0.2, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)
    def __call__(self, x):
        return self.linear2(self.drop(nnx.relu(self.linear1(x))))
MESSAGE = r"values differ"

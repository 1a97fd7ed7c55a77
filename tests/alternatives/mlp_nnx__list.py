"""Alternative: the two layers kept in an nnx.List and applied in a loop, ReLU between them."""
import jax
from flax import nnx
class MLP(nnx.Module):
    def __init__(self, in_features=9, hidden=64, out_features=1, *, rngs):
        sizes = [in_features, hidden, out_features]
        self.layers = nnx.List([nnx.Linear(a, b, rngs=rngs) for a, b in zip(sizes[:-1], sizes[1:])])
    def __call__(self, x):
        *hidden_layers, last = self.layers
        for layer in hidden_layers:
            x = jax.nn.relu(layer(x))
        return last(x)

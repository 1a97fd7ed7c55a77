"""Alternative: raw nnx.Param weights drawn from rngs.params(), a matmul by hand, and keyword-friendly names."""
import jax, jax.numpy as jnp
from flax import nnx
class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        init = jax.nn.initializers.lecun_normal()
        self.w1 = nnx.Param(init(rngs.params(), (in_features, hidden)))
        self.b1 = nnx.Param(jnp.zeros((hidden,)))
        self.w2 = nnx.Param(init(rngs.params(), (hidden, out_features)))
        self.b2 = nnx.Param(jnp.zeros((out_features,)))
    def __call__(self, x):
        h = jax.nn.relu(x @ self.w1[...] + self.b1[...])
        return h @ self.w2[...] + self.b2[...]

"""Another correct mlp_nnx: the layers in an nnx.Sequential, with explicit
initialisers passed to nnx.Linear and the ReLU as a function in the chain."""

import jax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        init = nnx.initializers.lecun_normal()
        self.net = nnx.Sequential(
            nnx.Linear(in_features, hidden, kernel_init=init, rngs=rngs),
            jax.nn.relu,
            nnx.Linear(hidden, out_features, kernel_init=init, rngs=rngs),
        )

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.net(x)

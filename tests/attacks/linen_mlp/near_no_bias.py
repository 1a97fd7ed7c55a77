"""Near miss: the output layer has no bias (Dense(1, use_bias=False))."""

MESSAGE = r"parameters|biases"


import flax.linen as nn
import jax
import jax.numpy as jnp


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(self.hidden)(x)
        x = nn.relu(x)
        return nn.Dense(1, use_bias=False)(x)


def count_params(params) -> int:
    return int(sum(leaf.size for leaf in jax.tree.leaves(params)))

"""Near miss: the ReLU between the two layers is missing."""

MESSAGE = r"ReLU|apply"


import flax.linen as nn
import jax
import jax.numpy as jnp


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(self.hidden)(x)
        return nn.Dense(1)(x)


def count_params(params) -> int:
    return int(sum(leaf.size for leaf in jax.tree.leaves(params)))

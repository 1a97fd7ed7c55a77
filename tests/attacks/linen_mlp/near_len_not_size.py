"""Near miss: count_params adds up len(leaf), the length of each array's first axis, not its size."""

MESSAGE = r"count_params"


import flax.linen as nn
import jax
import jax.numpy as jnp


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(self.hidden)(x)
        x = nn.relu(x)
        return nn.Dense(1)(x)


def count_params(params) -> int:
    return int(sum(len(leaf) for leaf in jax.tree.leaves(params)))

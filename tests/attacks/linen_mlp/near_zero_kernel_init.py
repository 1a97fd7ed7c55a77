"""Near miss: both Dense layers start from zeros (kernel_init=nn.initializers.zeros), not from the key."""

MESSAGE = r"same for two keys, or holds one value"


import flax.linen as nn
import jax
import jax.numpy as jnp


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(self.hidden, kernel_init=nn.initializers.zeros)(x)
        x = nn.relu(x)
        return nn.Dense(1, kernel_init=nn.initializers.zeros)(x)


def count_params(params) -> int:
    return int(sum(leaf.size for leaf in jax.tree.leaves(params)))

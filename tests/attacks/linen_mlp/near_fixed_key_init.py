"""Near miss: the first layer's kernel is drawn from a fixed key of its own, whatever key init gets."""

MESSAGE = r"same for two keys"


import flax.linen as nn
import jax
import jax.numpy as jnp


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        fixed = lambda _key, shape, dtype=jnp.float32: nn.initializers.lecun_normal()(jax.random.key(0), shape, dtype)
        x = nn.Dense(self.hidden, kernel_init=fixed)(x)
        x = nn.relu(x)
        return nn.Dense(1)(x)


def count_params(params) -> int:
    return int(sum(leaf.size for leaf in jax.tree.leaves(params)))

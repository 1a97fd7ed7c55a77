"""Another correct mlp_nnx: one nnx.Sequential, with jax.nn.relu as a layer."""

from __future__ import annotations

import jax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, in_features=9, hidden=64, out_features=1, *, rngs):
        self.net = nnx.Sequential(
            nnx.Linear(in_features, hidden, rngs=rngs),
            jax.nn.relu,
            nnx.Linear(hidden, out_features, rngs=rngs),
        )

    def __call__(self, x):
        return self.net(x)

"""Exercise: the article's Titanic MLP as a Flax NNX module.

The PyTorch model you are porting:

    class MLP(torch.nn.Module):
        def __init__(self, in_features=9, hidden=64, out_features=1):
            super().__init__()
            self.linear1 = torch.nn.Linear(in_features, hidden)
            self.linear2 = torch.nn.Linear(hidden, out_features)

        def forward(self, x):
            return self.linear2(torch.relu(self.linear1(x)))

Write `MLP` as an `nnx.Module` with this exact signature:

    MLP(in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs)

- `__init__` creates the layers eagerly from `rngs` (two `nnx.Linear` layers,
  with biases).
- `__call__(x)` takes a float32 array of shape `(batch, in_features)` and returns
  the logits, shape `(batch, out_features)`: linear, ReLU, linear. No sigmoid: the
  loss (binary cross-entropy with logits) applies it.

What the checks do: build `MLP(...)` with sizes drawn at check time, look at the
shapes of its `nnx.Param`s (a kernel `(in, hidden)` and bias `(hidden,)`, a kernel
`(hidden, out)` and bias `(out,)`, nothing else), set those parameters to values
chosen by the check, and compare the outputs on random inputs with the reference
model's. They also check that the same `rngs` seed gives the same initial
parameters and that a different seed gives different ones.
"""

from __future__ import annotations

import jax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        # TODO: create two nnx.Linear layers (in_features -> hidden -> out_features), passing rngs.
        raise NotImplementedError("TODO: MLP.__init__")

    def __call__(self, x: jax.Array) -> jax.Array:
        # TODO: linear, ReLU, linear; return the logits.
        raise NotImplementedError("TODO: MLP.__call__")

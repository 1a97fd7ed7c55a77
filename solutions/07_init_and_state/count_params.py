"""Solution: count and list nnx.Param variables from the model's state."""

from __future__ import annotations

import jax
from flax import nnx


def count_params(model: nnx.Module) -> int:
    params = nnx.state(model, nnx.Param)
    return sum(int(leaf.size) for leaf in jax.tree.leaves(params))


def param_shapes(model: nnx.Module) -> dict[str, tuple[int, ...]]:
    flat = nnx.to_flat_state(nnx.state(model, nnx.Param))
    return {".".join(str(part) for part in path): tuple(var.shape) for path, var in flat}

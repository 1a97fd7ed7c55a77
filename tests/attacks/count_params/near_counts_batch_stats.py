"""Near miss: counts every array in nnx.state(model), BatchNorm statistics and RNG state included."""

import jax
from flax import nnx

MESSAGE = r"BatchStat"


def count_params(model):
    return int(sum(x.size for x in jax.tree.leaves(nnx.state(model))))


def param_shapes(model):
    return {".".join(map(str, p)): tuple(v.shape) for p, v in nnx.to_flat_state(nnx.state(model))}

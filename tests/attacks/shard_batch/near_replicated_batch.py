"""Near miss: shard_batch replicates the batch on every device (PartitionSpec()) instead of splitting its rows."""

MESSAGE = r"shard"

import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh() -> Mesh:
    return jax.make_mesh((len(jax.devices()),), ("data",))


def shard_batch(x: np.ndarray, mesh: Mesh) -> jax.Array:
    return jax.device_put(x, NamedSharding(mesh, P()))


def forward_sharded(model: nnx.Module, x: np.ndarray, mesh: Mesh) -> np.ndarray:
    xs = shard_batch(x, mesh)
    with jax.set_mesh(mesh):
        out = nnx.jit(lambda m, v: m(v))(model, xs)
    return np.asarray(out)

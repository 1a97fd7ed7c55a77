"""Near miss: the mesh axis is named "batch", not "data", and the rows are split over it."""

MESSAGE = r"data_mesh\(\)|\"data\""

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh() -> Mesh:
    return jax.make_mesh((len(jax.devices()),), ("batch",))


def shard_batch(x: np.ndarray, mesh: Mesh) -> jax.Array:
    return jax.device_put(x, NamedSharding(mesh, P("batch")))


def forward_sharded(model: nnx.Module, x: np.ndarray, mesh: Mesh) -> np.ndarray:
    xs = shard_batch(x, mesh)
    with jax.set_mesh(mesh):
        out = nnx.jit(lambda m, v: m(v))(model, xs)
    return np.asarray(out)

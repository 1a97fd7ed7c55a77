"""Near miss: data_mesh spans only the first 2 of the 4 devices, so each device holds half the batch."""

MESSAGE = r"data_mesh\(\)"

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh() -> Mesh:
    return jax.make_mesh((2,), ("data",), devices=jax.devices()[:2])


def shard_batch(x: np.ndarray, mesh: Mesh) -> jax.Array:
    return jax.device_put(x, NamedSharding(mesh, P("data")))


def forward_sharded(model: nnx.Module, x: np.ndarray, mesh: Mesh) -> np.ndarray:
    xs = shard_batch(x, mesh)
    with jax.set_mesh(mesh):
        out = nnx.jit(lambda m, v: m(v))(model, xs)
    return np.asarray(out)

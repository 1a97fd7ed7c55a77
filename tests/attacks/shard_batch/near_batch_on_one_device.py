"""Near miss: shard_batch puts the whole batch on the first device (jax.device_put(x, device)), never split."""

MESSAGE = r"NamedSharding\(mesh, PartitionSpec\(\"data\"\)\)"

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh() -> Mesh:
    return jax.make_mesh((len(jax.devices()),), ("data",))


def shard_batch(x: np.ndarray, mesh: Mesh) -> jax.Array:
    return jax.device_put(x, jax.devices()[0])


def forward_sharded(model: nnx.Module, x: np.ndarray, mesh: Mesh) -> np.ndarray:
    xs = jax.device_put(x, NamedSharding(mesh, P("data")))
    with jax.set_mesh(mesh):
        out = nnx.jit(lambda m, v: m(v))(model, xs)
    return np.asarray(out)

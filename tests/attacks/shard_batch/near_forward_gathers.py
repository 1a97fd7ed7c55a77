"""Near miss: forward_sharded shards the batch but reshards it to whole (PartitionSpec()) inside the jitted function, so every device runs the model on every row."""

MESSAGE = r"sharded batch as it is"

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh() -> Mesh:
    return jax.make_mesh((len(jax.devices()),), ("data",))


def shard_batch(x: np.ndarray, mesh: Mesh) -> jax.Array:
    return jax.device_put(x, NamedSharding(mesh, P("data")))


@nnx.jit
def _forward(model, v):
    return model(jax.sharding.reshard(v, P()))


def forward_sharded(model: nnx.Module, x: np.ndarray, mesh: Mesh) -> np.ndarray:
    xs = shard_batch(x, mesh)
    with jax.set_mesh(mesh):
        out = _forward(model, xs)
    return np.asarray(out)
